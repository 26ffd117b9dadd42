/**
 * @module Runs the tool_use blocks of one assistant message in order: tool.called, the confirmation when
 * the tool needs one (first answer wins, timeout = deny, scope `session` remembered: an allow runs the tool
 * and a deny refuses it for the rest of the session without asking), the run, then
 * tool.completed or tool.failed; every outcome goes back to the model as a tool_result. Workers may use
 * the read-only tools and the tools their planner approved for the session, nothing else.
 */
import type { Kysely } from 'kysely';
import type { ToolResultBlock, ToolUseBlock } from '../canonical/message.ts';
import type { Bus } from '../events/bus.ts';
import type { ToolErrorClass } from '../events/catalog.ts';
import { add, type Decimal, ZERO } from '../lib/decimal.ts';
import type { NewId } from '../lib/ids.ts';
import type { Logger } from '../lib/log.ts';
import { type Clock, formatUs } from '../lib/time.ts';
import type { Database } from '../store/schema.ts';
import { finishToolCall, insertToolCall } from './sessions/tool-calls.ts';
import { whileStoreAway } from './store-wait.ts';
import { DelegateInputSchema } from './tools/delegate.ts';
import { type InputPreview, previewInput } from './tools/input-preview.ts';
import { parseInput } from './tools/result.ts';
import type { ToolContext, ToolResult, WorkspaceTool } from './tools/tool.ts';
import type { Confirmations } from './turns/confirmations.ts';

export interface ToolDispatchDeps {
  db: Kysely<Database>;
  bus: Bus;
  log: Logger;
  newId: NewId;
  clock: Clock;
  tools: readonly WorkspaceTool[];
  confirmations: Confirmations;
  confirmationTimeoutMs: number;
  childEnv: NodeJS.ProcessEnv;
  /** Tools the user approved with scope `session`, per session (mutable). */
  approvals(sessionId: string): Set<string>;
  /** Tools the user denied with scope `session`, per session (mutable). */
  denials(sessionId: string): Set<string>;
  /** Runs a `delegate` tool_use in a worker session; the planner's loop only waits for it. */
  delegate(input: DelegateInput): Promise<{ result: ToolResult; cost: Decimal }>;
}

export interface DelegateInput {
  task: string;
  model: string | null;
  toolUseId: string;
  plannerSessionId: string;
  plannerTurnId: string;
  workspace: string;
  /** The planner's root, the worker's too. */
  root: string;
  signal: AbortSignal;
}

export interface DispatchTurn {
  turnId: string;
  sessionId: string;
  /** The session's workspace_path as stored (a worker session is created on it). */
  workspace: string;
  /** The real path the tools are confined to, pinned for the session (sessions/workspace-roots.ts). */
  root: string;
  signal: AbortSignal;
  worker: { plannerApprovals: ReadonlySet<string> } | null;
}

export interface Dispatched {
  results: ToolResultBlock[];
  /** The turn was cancelled during dispatch (the remaining tools failed as cancelled). */
  cancelled: boolean;
}

export async function runToolUses(
  deps: ToolDispatchDeps,
  turn: DispatchTurn,
  messageId: string,
  uses: readonly ToolUseBlock[],
  /** The turn's spend so far: a delegated worker's cost is added as soon as the worker ended. */
  spent: { cost: Decimal },
): Promise<Dispatched> {
  const results: ToolResultBlock[] = [];
  for (const use of uses) {
    // latency is the tool's own time: restarted once a confirmation is answered (the user's wait is not it)
    let started = performance.now();
    const callId = deps.newId();
    const base = { actor: 'tool', session_id: turn.sessionId, turn_id: turn.turnId } as const;
    // the events and the row hold the input with long strings cut; the message holds it whole
    const shown = previewInput(use.input);
    // the call's end and its confirmation are children of its tool.called (none at the seam: never called)
    let calledId: string | null = null;
    const failed = async (error_class: ToolErrorClass, message: string, output?: string) => {
      // the event carries the failure's sentence only; what the tool printed goes to the model and the row
      const content = `${error_class}: ${message}${output ? `\n${output}` : ''}`;
      deps.bus.publish({
        ...base,
        type: 'tool.failed',
        parent_event_id: calledId,
        payload: { tool_use_id: use.id, tool_name: use.name, latency_ms: ms(started), error_class, message },
      });
      const completed_at = now(deps);
      await whileStoreAway(deps.log, 'tool call end', () =>
        finishToolCall(deps.db, callId, {
          output: output ? `${message}\n${output}` : message,
          status: error_class === 'cancelled' ? 'cancelled' : 'failed',
          error_class,
          completed_at,
        }),
      );
      results.push({
        type: 'tool_result',
        tool_use_id: use.id,
        content,
        is_error: true,
      });
    };
    const toolCall = {
      id: callId,
      session_id: turn.sessionId,
      turn_id: turn.turnId,
      message_id: messageId,
      tool_use_id: use.id,
      tool_name: use.name,
      input: shown.input,
      status: turn.signal.aborted ? ('pending' as const) : ('running' as const),
      started_at: now(deps),
    };
    await whileStoreAway(deps.log, 'tool call', () => insertToolCall(deps.db, toolCall));
    if (turn.signal.aborted) {
      // spec 2 "At the seam": scheduled, never started
      await failed('cancelled', 'the turn was cancelled before this tool started');
      continue;
    }
    calledId = deps.bus.publish({
      ...base,
      type: 'tool.called',
      payload: { tool_use_id: use.id, tool_name: use.name, ...inputFields(shown) },
    }).event.id;
    const outcome = await runOne(deps, turn, use, shown, calledId, () => {
      started = performance.now();
    }).catch((err: unknown): RunOutcome => {
      // a tool that throws is that call's failure, never the turn's end (tools return their own failures)
      // logged by name and code only: an exception's text may quote the model's input
      const code = (err as NodeJS.ErrnoException | undefined)?.code;
      deps.log.error('tool threw', { tool_name: use.name, error: code ?? (err as Error)?.name });
      return {
        kind: 'failed',
        error_class: 'execution_error',
        message: `${use.name} failed: ${errorText(err)}`,
      };
    });
    if (outcome.kind === 'failed') {
      await failed(outcome.error_class, outcome.message);
      continue;
    }
    spent.cost = add(spent.cost, outcome.cost);
    const r = outcome.result;
    if (!r.ok) {
      await failed(turn.signal.aborted ? 'cancelled' : r.error_class, r.message, r.output);
      continue;
    }
    deps.bus.publish({
      ...base,
      type: 'tool.completed',
      parent_event_id: calledId,
      payload: {
        tool_use_id: use.id,
        tool_name: use.name,
        latency_ms: ms(started),
        output_bytes: Buffer.byteLength(r.output),
        truncated: r.truncated ?? false,
      },
    });
    const completed_at = now(deps);
    await whileStoreAway(deps.log, 'tool call end', () =>
      finishToolCall(deps.db, callId, {
        output: r.output,
        status: 'completed',
        error_class: null,
        completed_at,
        truncated: r.truncated ?? false,
      }),
    );
    results.push({ type: 'tool_result', tool_use_id: use.id, content: r.output });
  }
  return { results, cancelled: turn.signal.aborted };
}

// --- internal ---

type RunOutcome =
  | { kind: 'ran'; result: ToolResult; cost: Decimal }
  | { kind: 'failed'; error_class: ToolErrorClass; message: string };

async function runOne(
  deps: ToolDispatchDeps,
  turn: DispatchTurn,
  use: ToolUseBlock,
  shown: InputPreview,
  calledId: string,
  onAnswered: () => void,
): Promise<RunOutcome> {
  const tool = deps.tools.find((t) => t.name === use.name);
  if (!tool)
    return { kind: 'failed', error_class: 'not_found', message: `there is no tool named ${use.name}` };
  if (turn.worker) {
    if (tool.name === 'delegate')
      return {
        kind: 'failed',
        error_class: 'permission_denied',
        message: 'a worker session cannot delegate',
      };
    if (!tool.readOnly && !turn.worker.plannerApprovals.has(tool.name))
      return {
        kind: 'failed',
        error_class: 'permission_denied',
        message: `a worker may use ${tool.name} only after the planner's session approved it for the session`,
      };
  } else if (tool.needsConfirmation && deps.denials(turn.sessionId).has(tool.name)) {
    return {
      kind: 'failed',
      error_class: 'denied_by_user',
      message: `the user denied ${tool.name} for the rest of this session`,
    };
  } else if (tool.needsConfirmation && !deps.approvals(turn.sessionId).has(tool.name)) {
    // a call that cannot run (bad input, a path outside the workspace) fails without asking the user
    const invalid = await tool.check?.(use.input, toolContext(deps, turn));
    if (invalid) return { kind: 'failed', error_class: invalid.error_class, message: invalid.message };
    const denied = await confirm(deps, turn, use, shown, calledId);
    onAnswered();
    if (denied) return denied;
  }
  if (tool.name === 'delegate') {
    const input = parseInput(DelegateInputSchema, use.input);
    if (!input.ok) return { kind: 'failed', error_class: input.error_class, message: input.message };
    if (input.value.task.trim() === '')
      return { kind: 'failed', error_class: 'invalid_input', message: 'input field `task`: is blank' };
    const d = await deps.delegate({
      task: input.value.task,
      model: input.value.model ?? null,
      toolUseId: use.id,
      plannerSessionId: turn.sessionId,
      plannerTurnId: turn.turnId,
      workspace: turn.workspace,
      root: turn.root,
      signal: turn.signal,
    });
    return { kind: 'ran', result: d.result, cost: d.cost };
  }
  const result = await tool.run(use.input, toolContext(deps, turn));
  return { kind: 'ran', result, cost: ZERO };
}

function toolContext(deps: ToolDispatchDeps, turn: DispatchTurn): ToolContext {
  return { workspace: turn.root, signal: turn.signal, childEnv: deps.childEnv };
}

/** Asks the user; undefined when allowed, else the failure to report. */
async function confirm(
  deps: ToolDispatchDeps,
  turn: DispatchTurn,
  use: ToolUseBlock,
  shown: InputPreview,
  calledId: string,
): Promise<RunOutcome | undefined> {
  const requestId = deps.newId();
  const requested = deps.bus.publish({
    actor: 'agent',
    session_id: turn.sessionId,
    turn_id: turn.turnId,
    parent_event_id: calledId,
    type: 'tool.confirmation_requested',
    payload: { request_id: requestId, tool_use_id: use.id, tool_name: use.name, ...inputFields(shown) },
  });
  // the answer (or the cancel that settles it) is a child of the request, as recovery writes it
  const base = {
    actor: 'agent',
    session_id: turn.sessionId,
    turn_id: turn.turnId,
    parent_event_id: requested.event.id,
  } as const;
  const outcome = await deps.confirmations.ask({
    requestId,
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    timeoutMs: deps.confirmationTimeoutMs,
    signal: turn.signal,
  });
  if (outcome.decision === 'cancelled') {
    // the request is closed in the trace too (spec 2: requested → resolved), as a deny nobody answered: a
    // cancel (REST, socket, timeout, the server's stop) leaves no confirmation dangling
    deps.bus.publish({
      ...base,
      actor: 'system',
      type: 'tool.confirmation_resolved',
      payload: {
        request_id: requestId,
        tool_use_id: use.id,
        tool_name: use.name,
        decision: 'deny',
        scope: 'once',
        timed_out: false,
        cancelled: true,
      },
    });
    return {
      kind: 'failed',
      error_class: 'cancelled',
      message: 'the turn was cancelled while waiting for confirmation',
    };
  }
  deps.bus.publish({
    ...base,
    actor: outcome.timedOut ? 'system' : 'user',
    type: 'tool.confirmation_resolved',
    payload: {
      request_id: requestId,
      tool_use_id: use.id,
      tool_name: use.name,
      decision: outcome.decision,
      scope: outcome.scope,
      timed_out: outcome.timedOut,
    },
  });
  if (outcome.decision === 'deny') {
    if (outcome.scope === 'session' && !outcome.timedOut) deps.denials(turn.sessionId).add(use.name);
    return {
      kind: 'failed',
      error_class: 'denied_by_user',
      message: outcome.timedOut
        ? 'nobody confirmed this tool call in time'
        : 'the user denied this tool call',
    };
  }
  if (outcome.scope === 'session') deps.approvals(turn.sessionId).add(use.name);
  return undefined;
}

/** `input`, and `input_truncated` (path → full length in characters) when a string of it was cut. */
function inputFields(shown: InputPreview): { input: unknown; input_truncated?: Record<string, number> } {
  return shown.truncated ? { input: shown.input, input_truncated: shown.truncated } : { input: shown.input };
}

function errorText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const text = err instanceof Error ? err.message : String(err);
  return code && !text.includes(code) ? `${code}: ${text}` : text;
}

function ms(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}

function now(deps: { clock: Clock }): string {
  return formatUs(deps.clock.nowUs());
}
