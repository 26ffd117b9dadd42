/**
 * @module The agent loop of one turn: call the routed model (streaming, through the shared call runner),
 * publish its canonical stream events, run the tools it asked for, append the results and call again,
 * until a stop reason other than `tool_use` or the step limit. Cancellation follows spec 2's table.
 */
import type { Kysely } from 'kysely';
import type { CanonicalMessage, ContentBlock, ToolUseBlock } from '../canonical/message.ts';
import { emptyUsage, type StopReason } from '../canonical/response.ts';
import type { CanonicalStreamEvent, MessageCompleteEvent, RawBlockEvent } from '../canonical/stream.ts';
import type { Bus } from '../events/bus.ts';
import { add, type Decimal, ZERO } from '../lib/decimal.ts';
import { isSvcError } from '../lib/errors.ts';
import type { NewId } from '../lib/ids.ts';
import type { Logger } from '../lib/log.ts';
import { type Clock, formatUs } from '../lib/time.ts';
import { LlmCallFailed } from '../llm/call.ts';
import type { CanonicalEventStream } from '../llm/call-stream.ts';
import type { CallRunner, CallScope, Routed, RunningCall } from '../llm/runner.ts';
import { describeRequest } from '../routing/request-facts.ts';
import type { Database } from '../store/schema.ts';
import { appendMessage, sessionHistory } from './sessions/messages.ts';
import { whileStoreAway } from './store-wait.ts';
import { runToolUses, type ToolDispatchDeps } from './tool-dispatch.ts';
import { buildTurnRequest, historyForModel, type TurnRequestParts } from './turn-request.ts';
import { createPartialMessage } from './turns/partial-message.ts';

export interface LoopDeps extends ToolDispatchDeps {
  db: Kysely<Database>;
  bus: Bus;
  log: Logger;
  runner: CallRunner;
  newId: NewId;
  clock: Clock;
  /** Model calls per turn (SVC_AGENT_MAX_STEPS). */
  maxSteps: number;
}

export interface LoopTurn {
  turnId: string;
  sessionId: string;
  workspace: string;
  /** The real path the tools are confined to (sessions/workspace-roots.ts). */
  root: string;
  scope: CallScope;
  routed: Routed;
  /** The model ref the turn asked for (override or delegate request), echoed as requested_model. */
  requestedModel: string | null;
  system: string;
  signal: AbortSignal;
  /** Worker turns: tools allowed beyond the read-only ones (the planner's session approvals). */
  worker: { plannerApprovals: ReadonlySet<string> } | null;
}

/**
 * What the turn has spent and how many model calls it has opened so far, updated in place by the loop: a
 * turn that throws past the loop still ends with the calls and tools it had paid for (start-turn.ts).
 */
export interface TurnProgress {
  cost: Decimal;
  steps: number;
}

export interface LoopOutcome {
  status: 'completed' | 'cancelled' | 'failed';
  cost: Decimal;
  stopReason: string | null;
  /** Text of the last assistant message (a delegate's result). */
  finalText: string;
  steps: number;
  errorCode: string | null;
  errorClass: string | null;
}

export async function runAgentLoop(
  deps: LoopDeps,
  turn: LoopTurn,
  progress: TurnProgress,
): Promise<LoopOutcome> {
  let finalText = '';
  const out = (status: LoopOutcome['status'], stop: string | null, err?: unknown): LoopOutcome => ({
    status,
    cost: progress.cost,
    stopReason: stop,
    finalText,
    steps: progress.steps,
    ...failureOf(err),
  });
  // cancelled before its first call (while it was routed): an empty cancelled answer, as a cancel before the
  // first byte leaves, so the history reads the request as cancelled (sessions/messages.ts)
  const cancelledAt = async (step: number): Promise<LoopOutcome> => {
    if (step === 1) await persistAssistant(deps, turn, deps.newId(), [], 'cancelled', turn.routed);
    return out('cancelled', 'cancelled');
  };
  for (let step = 1; step <= deps.maxSteps; step++) {
    if (turn.signal.aborted) return cancelledAt(step);
    const messages = (await whileStoreAway(deps.log, 'history', () =>
      sessionHistory(deps.db, turn.sessionId),
    ))!;
    // cancelled while the history was read: no call is opened (the seam between steps)
    if (turn.signal.aborted) return cancelledAt(step);
    progress.steps = step;
    // the whole history, or the newest part that fits the routed model's context (the rest noted as left out)
    const call = await runModelCall(
      deps,
      turn,
      historyForModel(partsOf(deps, turn), messages, turn.routed.model),
      progress,
    );
    if (call.status !== 'completed') return out(call.status, call.stopReason, call.error);
    finalText = textOf(call.content);
    const toolUses = call.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
    if (call.stopReason !== 'tool_use' || toolUses.length === 0) return out('completed', call.stopReason);
    const dispatched = await runToolUses(deps, turn, call.messageId, toolUses, progress);
    const results = {
      id: deps.newId(),
      session_id: turn.sessionId,
      turn_id: turn.turnId,
      role: 'user' as const,
      content: dispatched.results,
      metadata: { kind: 'tool_results' },
      status: dispatched.cancelled ? ('cancelled' as const) : ('completed' as const),
      created_at: formatUs(deps.clock.nowUs()),
    };
    await whileStoreAway(deps.log, 'tool results', () => appendMessage(deps.db, results));
    if (dispatched.cancelled) return out('cancelled', 'cancelled');
  }
  deps.log.warn('agent turn reached the step limit', { turn_id: turn.turnId, max_steps: deps.maxSteps });
  return out('completed', 'max_steps');
}

// --- internal ---

interface CallOutcome {
  status: 'completed' | 'cancelled' | 'failed';
  messageId: string;
  content: ContentBlock[];
  stopReason: string | null;
  error?: unknown;
}

/**
 * One streamed model call: events published as they come; the assistant message persisted at the end; its
 * cost added to the turn's progress.
 */
async function runModelCall(
  deps: LoopDeps,
  turn: LoopTurn,
  messages: CanonicalMessage[],
  progress: TurnProgress,
): Promise<CallOutcome> {
  const messageId = deps.newId();
  const { routed } = turn;
  const publish = (e: Exclude<CanonicalStreamEvent, RawBlockEvent> | FailedComplete) => {
    const { type, ...payload } = e;
    deps.bus.publish({
      type,
      actor: 'agent',
      session_id: turn.sessionId,
      turn_id: turn.turnId,
      payload: { ...payload, message_id: messageId },
    });
  };
  const partial = createPartialMessage();
  let started = false;
  // a cancelled message is still one a client can follow: message.start (if none came yet), then complete
  const publishCancelled = (content: ContentBlock[], usage: MessageCompleteEvent['usage']) => {
    if (!started)
      publish({ type: 'message.start', message_id: messageId, role: 'assistant', model: routed.model.id });
    started = true;
    publish(cancelledComplete(messageId, content, usage));
  };
  let running: RunningCall | undefined;
  let events: CanonicalEventStream | undefined;
  let complete: MessageCompleteEvent | undefined;
  let failure: unknown;
  // a cancel before the upstream answered: message.complete now, so it precedes the runner's llm.call_failed
  let cancelledUnanswered = false;
  const onUnansweredAbort = () => {
    if (running) return;
    cancelledUnanswered = true;
    publishCancelled([], emptyUsage());
  };
  // a broken stream closes its message like a cancelled one, with stop_reason `error` (before llm.call_failed)
  let closedOnFailure = false;
  const closeOnFailure = () => {
    if (!started || closedOnFailure || complete) return;
    closedOnFailure = true;
    for (const end of partial.closeOpenToolUses(messageId)) publish(end);
    publish(failedComplete(messageId, partial.content(), events?.usage() ?? emptyUsage()));
  };
  turn.signal.addEventListener('abort', onUnansweredAbort, { once: true });
  try {
    try {
      const request = buildTurnRequest(partsOf(deps, turn), messages, {
        ref: turn.requestedModel ?? routed.model.id,
        entry: routed.model,
      });
      running = await deps.runner.start({
        routed,
        call: routed.adapter.encodeRequest(request, routed.upstreamModel),
        stream: true,
        scope: turn.scope,
        requestedModel: turn.requestedModel,
        signal: turn.signal,
        // what a call cancelled or broken before the provider stated its usage is billed on (as the gateway's)
        inputTokensEstimate: describeRequest(request, { workspacePath: null }).estimatedInputTokens,
        outputTokensBound: request.max_tokens ?? routed.model.capabilities.max_output_tokens,
      });
      turn.signal.removeEventListener('abort', onUnansweredAbort);
      events = deps.runner.streamEvents(running, turn.signal, {
        completeAfterYield: true,
        beforeFail: closeOnFailure,
      });
      for await (const e of events) {
        if (e.type === 'block.raw') continue; // no agent tool is a server tool; spec 2 has no such event
        if (e.type === 'message.start') started = true;
        publish(
          e.type === 'message.start'
            ? { type: e.type, message_id: e.message_id, role: e.role, model: routed.model.id }
            : e.type === 'message.complete'
              ? { ...e, stop_reason: streamStopReason(e.stop_reason) }
              : e,
        );
        partial.push(e);
        if (e.type === 'message.complete') complete = e;
      }
    } catch (err) {
      if (!turn.signal.aborted && !(err instanceof LlmCallFailed) && !isSvcError(err)) throw err;
      failure = err;
    } finally {
      turn.signal.removeEventListener('abort', onUnansweredAbort);
    }
    if (turn.signal.aborted && !complete) {
      const content = partial.content();
      const usage = events?.usage() ?? emptyUsage();
      if (!cancelledUnanswered) {
        // spec 2 "During LLM streaming": tool.use_end for each open tool_use, then message.complete cancelled
        for (const end of partial.closeOpenToolUses(messageId)) publish(end);
        publishCancelled(content, usage);
      }
      // billed as the provider bills it: with the input estimate and the words generated when it stated less
      if (running && !running.closed)
        running.cancel(events ? running.unfinishedUsage(events) : usage, events?.ttftMs() ?? null);
      await persistAssistant(deps, turn, messageId, content, 'cancelled', routed);
      return {
        status: 'cancelled',
        messageId,
        content,
        stopReason: 'cancelled',
      };
    }
    if (failure !== undefined || !complete) {
      closeOnFailure();
      // kept for the reader, never sent to a model again (sessions/messages.ts): a cut answer may hold a
      // tool_use that never ran
      if (started) await persistAssistant(deps, turn, messageId, partial.content(), 'failed', routed);
      return {
        status: 'failed',
        messageId,
        content: partial.content(),
        stopReason: null,
        error: failure,
      };
    }
    await persistAssistant(deps, turn, messageId, complete.final_content, 'completed', routed);
    return {
      status: 'completed',
      messageId,
      content: complete.final_content,
      stopReason: complete.stop_reason,
    };
  } finally {
    // a call still open here (a cancel that landed between its message.complete and its close, or something
    // that threw while its stream was read) is closed now: every call ends with exactly one closing event
    if (running && !running.closed) closeLeftOpen(deps, turn, running, events, complete);
    // counted once it is closed, even when something after it throws (the turn still paid for it); a call that
    // failed before its answer began counts what the provider billed for it all the same
    const unanswered = failure instanceof LlmCallFailed ? failure.cost : ZERO;
    progress.cost = add(progress.cost, running?.spent() ?? unanswered);
  }
}

/**
 * Closes a call the stream left open: as completed when the model's message was complete (its usage is the
 * provider's), else as cancelled with what the provider bills for the stream so far (the gateway's rule).
 */
function closeLeftOpen(
  deps: LoopDeps,
  turn: LoopTurn,
  running: RunningCall,
  events: CanonicalEventStream | undefined,
  complete: MessageCompleteEvent | undefined,
): void {
  deps.log.warn('agent model call left open by its stream; closed now', { turn_id: turn.turnId });
  const ttftMs = events?.ttftMs() ?? null;
  if (complete) running.complete({ usage: complete.usage, stopReason: complete.stop_reason, ttftMs });
  else running.cancel(events ? running.unfinishedUsage(events) : emptyUsage(), ttftMs);
}

async function persistAssistant(
  deps: LoopDeps,
  turn: LoopTurn,
  id: string,
  content: ContentBlock[],
  status: 'completed' | 'cancelled' | 'failed',
  routed: Routed,
): Promise<void> {
  if (content.length === 0 && status === 'completed') return;
  const message = {
    id,
    session_id: turn.sessionId,
    turn_id: turn.turnId,
    role: 'assistant' as const,
    content,
    metadata: { model: routed.model.id },
    status,
    created_at: formatUs(deps.clock.nowUs()),
  };
  await whileStoreAway(deps.log, 'assistant message', () => appendMessage(deps.db, message));
}

function partsOf(deps: LoopDeps, turn: LoopTurn): TurnRequestParts {
  return { tools: deps.tools, system: turn.system, worker: turn.worker !== null };
}

/** The turn's error code and class: the provider's failure (before or mid-stream), else internal_error. */
function failureOf(err: unknown): { errorCode: string | null; errorClass: string | null } {
  if (err === undefined) return { errorCode: null, errorClass: null };
  if (err instanceof LlmCallFailed)
    return { errorCode: err.failure.code, errorClass: err.failure.error_class };
  if (isSvcError(err)) {
    const cls = err.details?.error_class;
    return { errorCode: err.code, errorClass: typeof cls === 'string' ? cls : null };
  }
  return { errorCode: 'internal_error', errorClass: null };
}

/**
 * spec 2 §Events: message.complete's stop_reason is end_turn, max_tokens, stop_sequence or tool_use. A
 * provider's other reasons are said in those words (a context-window stop is a token limit, a refusal or a
 * pause an end of the answer); llm.call_completed and turn.completed keep the provider's own.
 */
function streamStopReason(stop: StopReason): StopReason {
  if (stop === 'model_context_window_exceeded') return 'max_tokens';
  if (stop === 'refusal' || stop === 'pause_turn') return 'end_turn';
  return stop;
}

/** message.complete of a message whose stream broke: beyond spec 2's stop reasons (README §Agent server). */
type FailedComplete = Omit<MessageCompleteEvent, 'stop_reason'> & { stop_reason: 'error' };

function failedComplete(
  messageId: string,
  content: ContentBlock[],
  usage: MessageCompleteEvent['usage'],
): FailedComplete {
  return {
    type: 'message.complete',
    message_id: messageId,
    stop_reason: 'error',
    final_content: content,
    usage,
  };
}

function cancelledComplete(
  messageId: string,
  content: ContentBlock[],
  usage: MessageCompleteEvent['usage'],
): MessageCompleteEvent {
  return {
    type: 'message.complete',
    message_id: messageId,
    stop_reason: 'cancelled',
    final_content: content,
    usage,
  };
}

function textOf(content: ContentBlock[]): string {
  return content
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join('\n');
}
