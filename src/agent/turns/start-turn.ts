/**
 * @module One turn from submission to its end event, for planner and worker sessions alike: claim the
 * session (one turn at a time), persist the user message, turn.started, route (route.decided; a routing
 * failure ends the turn and is thrown as 503 before the 202), then run the loop in the background and end
 * with turn.completed or turn.cancelled, the session's counters and cost updated exactly (end-turn.ts).
 */
import type { Kysely } from 'kysely';
import type { ContentBlock } from '../../canonical/message.ts';
import type { Bus } from '../../events/bus.ts';
import { inProcessSpendToday } from '../../gateway/spend-today.ts';
import { formatDecimal, ZERO } from '../../lib/decimal.ts';
import { isSvcError, SvcError } from '../../lib/errors.ts';
import type { NewId } from '../../lib/ids.ts';
import type { Logger } from '../../lib/log.ts';
import { type Clock, formatUs } from '../../lib/time.ts';
import type { CallRunner, CallScope, Routed } from '../../llm/runner.ts';
import type { SlotHooks } from '../../routing/facts.ts';
import { describeRequest } from '../../routing/request-facts.ts';
import { isStoreUnreachable } from '../../store/dialect.ts';
import type { Database, SessionRow } from '../../store/schema.ts';
import { type LoopDeps, type LoopOutcome, runAgentLoop, type TurnProgress } from '../loop.ts';
import { appendMessage, sessionHistory, setMessageStatus } from '../sessions/messages.ts';
import { beginTurn, clearTurn, finishTurn, getSession } from '../sessions/store.ts';
import type { WorkspaceRoots } from '../sessions/workspace-roots.ts';
import { whileStoreAway } from '../store-wait.ts';
import { buildSystemPrompt } from '../system-prompt.ts';
import { buildTurnRequest, offeredToolNames, smallestInputTokens } from '../turn-request.ts';
import { endTurn } from './end-turn.ts';

export interface StartTurnDeps extends LoopDeps {
  db: Kysely<Database>;
  bus: Bus;
  log: Logger;
  newId: NewId;
  clock: Clock;
  runner: CallRunner;
  turnTimeoutMs: number;
  /** Slot 4's learned table (routing/pattern/router.ts); absent: slot 4 answers no_match. */
  routingHooks?: SlotHooks;
  /** Each session's workspace root, pinned when first met. */
  workspaceRoots: WorkspaceRoots;
}

export interface TurnHandle {
  readonly turnId: string;
  readonly sessionId: string;
  readonly controller: AbortController;
  /** Set by the first cancel (REST, socket, timeout, shutdown, planner). */
  cancelReason: string | null;
  readonly done: Promise<LoopOutcome>;
}

export interface StartTurnInput {
  session: SessionRow;
  content: ContentBlock[];
  /** Slot 1 (per_message_override): already resolved from the field or the `@alias` prefix. */
  override: string | null;
  /** Workers: slot 5 (delegate_request) and the planner's session approvals. */
  worker: {
    delegateModel: string | null;
    plannerApprovals: ReadonlySet<string>;
    parentSignal: AbortSignal;
  } | null;
  /**
   * Frees the session of the ended turn: applies what waits for the turn boundary (a queued model swap),
   * then runs `free`, one step that no model swap on the session may interleave with.
   */
  release(handle: TurnHandle, free: () => Promise<void>): Promise<void>;
  /**
   * Called once the session is claimed, before turn.started is published: from then on a cancel (REST, or a
   * socket that saw turn.started) finds the turn, even while it is still being routed.
   */
  onClaimed(handle: TurnHandle): void;
  /** Called once the turn has ended (the session released), just before its end event is published. */
  onEnd(handle: TurnHandle, outcome: LoopOutcome): void;
}

export interface Started {
  handle: TurnHandle;
  userMessageId: string;
  submittedAt: string;
  routed: Routed;
}

export async function startTurn(deps: StartTurnDeps, input: StartTurnInput): Promise<Started> {
  const { session } = input;
  const turnId = deps.newId();
  const submittedAt = formatUs(deps.clock.nowUs());
  const userMessageId = deps.newId();
  // the claim and the user message commit together: a message the store refuses (a full disk) must not
  // leave the session held by a turn that never started (409 turn_in_flight until a restart)
  const claim = deps.db.transaction().execute(async (trx) => {
    if (!(await beginTurn(trx, session.id, turnId, submittedAt))) {
      // ended since the route read it (a DELETE racing this submission): not a turn in flight
      if ((await getSession(trx, session.id))?.ended_at)
        throw new SvcError('session_already_ended', { message: `session ${session.id} has ended` });
      throw new SvcError('turn_in_flight', {
        message: `session ${session.id} already has a turn in flight; wait for it to end or cancel it`,
        details: { current_turn_id: session.current_turn_id },
      });
    }
    await appendMessage(trx, {
      id: userMessageId,
      session_id: session.id,
      turn_id: turnId,
      role: 'user',
      content: input.content,
      metadata: input.override ? { per_message_override: input.override } : {},
      created_at: submittedAt,
    });
  });
  try {
    await claim;
  } catch (err) {
    if (!isStoreUnreachable(err)) throw err;
    // the connection was lost at the commit, which may have happened unheard: once the store is back a claim
    // that did commit is undone (session released, message removed), so no half turn holds the session
    undoClaim(deps, session.id, turnId, userMessageId).catch((e: unknown) =>
      deps.log.error('an unheard turn claim could not be undone', {
        turn_id: turnId,
        session_id: session.id,
        error: e,
      }),
    );
    throw err;
  }
  const controller = new AbortController();
  let settle!: (outcome: Promise<LoopOutcome>) => void;
  const handle: TurnHandle = {
    turnId,
    sessionId: session.id,
    controller,
    cancelReason: null,
    done: new Promise<LoopOutcome>((resolve) => {
      settle = resolve;
    }),
  };
  input.onClaimed(handle);
  // a DELETE that ended the session between the claim and the registration found no turn to cancel: the
  // turn cancels itself (DELETE ends the session before it looks for the turn, so one of the two sees it)
  if ((await getSession(deps.db, session.id).catch(() => undefined))?.ended_at) {
    handle.cancelReason ??= 'session_ended';
    controller.abort();
  }
  const scope: CallScope = {
    actor: 'agent',
    turnId,
    sessionId: session.id,
    gatewayKeyId: null,
    inboundShape: null,
    userId: null,
    teamId: null,
    parentSessionId: session.parent_session_id,
  };
  const opened = deps.bus.publish({
    actor: 'user',
    session_id: session.id,
    turn_id: turnId,
    type: 'turn.started',
    payload: {
      user_message_id: userMessageId,
      per_message_override: input.override,
      is_worker: session.is_worker === 1,
      parent_session_id: session.parent_session_id,
    },
  });
  // the turn's end (turn.completed / turn.cancelled) is a child of its turn.started, as recovery writes it
  const base = {
    actor: 'agent',
    session_id: session.id,
    turn_id: turnId,
    parent_event_id: opened.event.id,
  } as const;
  let routed: Routed;
  let system: string;
  const root = await deps.workspaceRoots.of(session);
  try {
    system = await buildSystemPrompt(session.workspace_path, root, deps.tools, input.worker !== null);
    routed = await route(deps, input, scope, system);
  } catch (err) {
    const unreachable = isStoreUnreachable(err);
    const code = unreachable ? 'store_unavailable' : isSvcError(err) ? err.code : 'internal_error';
    const refusal: LoopOutcome = {
      status: 'failed',
      cost: ZERO,
      stopReason: null,
      finalText: '',
      steps: 0,
      errorCode: code,
      errorClass: null,
    };
    input.onEnd(handle, refusal);
    settle(Promise.resolve(refusal));
    // the client is told the turn was refused: its message stays readable but is never sent to a model again
    // (kept in the history, a message too large for every model refused every later turn as well)
    const refused = async () => {
      await whileStoreAway(deps.log, 'refused turn', () =>
        setMessageStatus(deps.db, userMessageId, 'cancelled'),
      );
      // released before the end event, as endTurn does; the payload has every field of a turn.completed
      const now = formatUs(deps.clock.nowUs());
      await whileStoreAway(deps.log, 'refused turn', () =>
        finishTurn(deps.db, session.id, { turnId, costDelta: '0', now }),
      );
      await deps.bus.publish({
        ...base,
        type: 'turn.completed',
        payload: {
          status: 'failed',
          stop_reason: null,
          error_code: code,
          error_class: null,
          cost_usd: formatDecimal(ZERO),
          model: null,
          steps: 0,
        },
      }).committed;
    };
    if (!unreachable) {
      await refused();
      // the refused turn's id (its turn.completed is on the stream), so a client can tie the two together
      throw isSvcError(err)
        ? new SvcError(err.code, {
            message: err.message,
            details: { ...err.details, turn_id: turnId },
            cause: err.cause,
          })
        : err;
    }
    // the store went away between the claim and the routing: the client hears 503 now, and the turn is
    // closed (message cancelled, session released, turn.completed) as soon as the store is back
    refused().catch((e: unknown) =>
      deps.log.error('a refused turn could not be closed', {
        turn_id: turnId,
        session_id: session.id,
        error: e,
      }),
    );
    throw new SvcError('store_unavailable', {
      message:
        'The trace store cannot be reached (PostgreSQL is restarting or away), so the turn was not started; its message is kept as cancelled once the store is back, send it again shortly.',
      cause: err,
    });
  }

  const parent = input.worker?.parentSignal;
  const onParentAbort = () => {
    handle.cancelReason ??= 'planner_cancelled';
    controller.abort();
  };
  parent?.addEventListener('abort', onParentAbort, { once: true });
  if (parent?.aborted) onParentAbort();
  const timer = setTimeout(() => {
    handle.cancelReason ??= 'timeout';
    controller.abort();
  }, deps.turnTimeoutMs);
  timer.unref?.();

  const run = async (): Promise<LoopOutcome> => {
    let outcome: LoopOutcome;
    // what the loop had spent and how many calls it had made when something past its own handling threw
    const progress: TurnProgress = { cost: ZERO, steps: 0 };
    try {
      outcome = await runAgentLoop(
        deps,
        {
          turnId,
          sessionId: session.id,
          workspace: session.workspace_path,
          root,
          scope,
          routed,
          requestedModel: input.override ?? input.worker?.delegateModel ?? null,
          system,
          signal: controller.signal,
          worker: input.worker ? { plannerApprovals: input.worker.plannerApprovals } : null,
        },
        progress,
      );
    } catch (err) {
      deps.log.error('agent turn failed', { turn_id: turnId, session_id: session.id, error: err });
      outcome = {
        status: controller.signal.aborted ? 'cancelled' : 'failed',
        cost: progress.cost,
        stopReason: null,
        finalText: '',
        steps: progress.steps,
        errorCode: isStoreUnreachable(err) ? 'store_unavailable' : 'internal_error',
        errorClass: null,
      };
    } finally {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    }
    // the provider refused the prompt itself (400 on the turn's first call, nothing answered): it is kept
    // readable but not sent again, or every later turn of the session would fail the same way
    if (outcome.status === 'failed' && outcome.steps === 1 && outcome.errorClass === 'invalid_request')
      await whileStoreAway(deps.log, 'refused message', () =>
        setMessageStatus(deps.db, userMessageId, 'cancelled'),
      );
    await endTurn(deps, input, handle, routed, outcome, opened.event.id);
    return outcome;
  };
  settle(run());
  return { handle, userMessageId, submittedAt, routed };
}

// --- internal ---

async function undoClaim(deps: StartTurnDeps, sessionId: string, turnId: string, messageId: string) {
  await whileStoreAway(deps.log, 'unheard turn claim', () =>
    deps.db.transaction().execute(async (trx) => {
      if (await clearTurn(trx, sessionId, turnId))
        await trx.deleteFrom('messages').where('id', '=', messageId).execute();
    }),
  );
}

async function route(
  deps: StartTurnDeps,
  input: StartTurnInput,
  scope: CallScope,
  system: string,
): Promise<Routed> {
  const history = await sessionHistory(deps.db, input.session.id);
  const parts = { tools: deps.tools, system, worker: input.worker !== null };
  // the request as the turn sends it, system prompt and tool schemas included, as the gateway counts a
  // client's (input_tokens_above, slot 4's size bucket)
  const facts = describeRequest(buildTurnRequest(parts, history, null), {
    workspacePath: input.session.workspace_path,
  });
  facts.requestedModel = input.override;
  facts.hasTools = true;
  facts.toolNames = offeredToolNames(parts);
  // a history too long for a model is windowed to it (turn-request.ts): only the current message must fit
  facts.smallestInputTokens = smallestInputTokens(parts, history);
  facts.maxOutputTokens = null;
  facts.manualStickyModel = input.session.sticky === 1 ? input.session.active_model : null;
  facts.delegateModel = input.worker?.delegateModel ?? null;
  facts.workerTurn = input.worker !== null;
  // cost_today_above: what this server's own calls spent today (README §Routing policy)
  const costToday = await inProcessSpendToday(deps.db, deps.clock);
  return deps.runner.route({ facts, scope, hooks: deps.routingHooks, costTodayUsd: () => costToday });
}
