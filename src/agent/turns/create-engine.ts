/**
 * @module The TurnEngine behind the REST routes: turns in flight by id, cancellation (REST, timeout,
 * shutdown), confirmations, model swaps queued to the turn boundary, scope-`session` answers, and
 * delegation to worker sessions. Every model call goes through the shared call runner (llm/runner.ts).
 */

import { sql } from 'kysely';
import type { ContentBlock } from '../../canonical/message.ts';
import { SvcError } from '../../lib/errors.ts';
import { createKeyedLock } from '../../lib/keyed-lock.ts';
import { formatUs } from '../../lib/time.ts';
import type { ModelRegistry } from '../../models/registry.ts';
import type { PolicyStore } from '../../routing/load-policy.ts';
import type { SessionRow } from '../../store/schema.ts';
import { type DelegationDeps, runDelegation } from '../delegate.ts';
import { getSession, setActiveModel } from '../sessions/store.ts';
import { createWorkspaceRoots } from '../sessions/workspace-roots.ts';
import { whileStoreAway } from '../store-wait.ts';
import type { DelegateInput } from '../tool-dispatch.ts';
import { createConfirmations } from './confirmations.ts';
import type { TurnEngine } from './engine.ts';
import { answerFromTrace } from './late-answers.ts';
import { type StartTurnDeps, startTurn, type TurnHandle } from './start-turn.ts';

export interface TurnEngineDeps
  extends Omit<StartTurnDeps, 'confirmations' | 'approvals' | 'denials' | 'delegate' | 'workspaceRoots'> {
  policy: PolicyStore;
  registry: ModelRegistry;
}

export function createTurnEngine(deps: TurnEngineDeps): TurnEngine {
  const turns = new Map<string, TurnHandle>();
  /** The stop's cancel reason once cancelAll ran: a submission still in flight then gets no running turn. */
  let stopping: string | null = null;
  const approvals = new Map<string, Set<string>>();
  const denials = new Map<string, Set<string>>();
  /** Sessions whose scope-`session` answers were read back from the trace since this process started. */
  const answersLoaded = new Set<string>();
  const confirmations = createConfirmations();
  /** Per session: a model swap's check-and-queue against the turn end's apply-and-free. */
  const swapLock = createKeyedLock();
  const approvalsOf = (sessionId: string) => setOf(approvals, sessionId);
  const workspaceRoots = createWorkspaceRoots();
  const full: StartTurnDeps = {
    ...deps,
    workspaceRoots,
    confirmations,
    approvals: approvalsOf,
    denials: (sessionId: string) => setOf(denials, sessionId),
    delegate: (input: DelegateInput) => runDelegation(delegationDeps, input),
  };
  const hooks = {
    // under the session's lock: a PATCH that saw the turn running either queued its swap before this
    // reads it, or waits and finds the session free (applied at once); never queued behind a freed session
    release: (h: TurnHandle, free: () => Promise<void>) =>
      swapLock.run(h.sessionId, async () => {
        await whileStoreAway(deps.log, 'model swap', () => applyQueuedSwap(h.sessionId));
        await free();
      }),
    onClaimed(h: TurnHandle) {
      turns.set(h.turnId, h);
    },
    onEnd(h: TurnHandle) {
      turns.delete(h.turnId);
    },
  };
  const delegationDeps: DelegationDeps = {
    ...full,
    registry: deps.registry,
    policy: deps.policy,
    async startWorkerTurn(session, content, worker) {
      return startTurn(full, { session, content, override: null, worker, ...hooks });
    },
    plannerApprovals: approvalsOf,
  };

  async function openSession(sessionId: string): Promise<SessionRow> {
    const session = await getSession(deps.db, sessionId);
    if (!session) throw new SvcError('session_not_found', { message: `no session ${sessionId}` });
    if (session.ended_at !== null)
      throw new SvcError('session_already_ended', { message: `session ${sessionId} has ended` });
    return session;
  }

  /** 404 turn_not_found unless the session started the turn (spec 2 Errors: cancel, confirmations). */
  async function requireTurn(sessionId: string, turnId: string): Promise<void> {
    const known = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM events
      WHERE turn_id = ${turnId} AND session_id = ${sessionId} AND type = 'turn.started'`.execute(deps.db);
    if (Number(known.rows[0]?.n ?? 0) === 0)
      throw new SvcError('turn_not_found', { message: `no turn ${turnId} in session ${sessionId}` });
  }

  /** The swap a PATCH queued (kept in the session row, so a restart keeps it too), applied and cleared. */
  async function applyQueuedSwap(sessionId: string): Promise<void> {
    const row = await deps.db
      .selectFrom('sessions')
      .select(['queued_swap', 'queued_model'])
      .where('id', '=', sessionId)
      .executeTakeFirst();
    if (row?.queued_swap !== 1) return;
    await applySwap(sessionId, row.queued_model);
    await deps.db
      .updateTable('sessions')
      .set({ queued_swap: 0, queued_model: null })
      .where('id', '=', sessionId)
      .execute();
  }

  /**
   * The scope-`session` answers a session was given before this process started, read back from its
   * tool.confirmation_resolved events (the last answer per tool wins, as live), once per session.
   */
  async function loadSessionAnswers(sessionId: string): Promise<void> {
    if (answersLoaded.has(sessionId)) return;
    const rows = await deps.db
      .selectFrom('events')
      .select('payload')
      .where('session_id', '=', sessionId)
      .where('type', '=', 'tool.confirmation_resolved')
      .orderBy('id')
      .execute();
    if (answersLoaded.has(sessionId)) return;
    answersLoaded.add(sessionId);
    for (const r of rows) {
      const p = JSON.parse(r.payload) as {
        tool_name?: unknown;
        decision?: unknown;
        scope?: unknown;
        timed_out?: unknown;
      };
      if (p.scope !== 'session' || p.timed_out === true || typeof p.tool_name !== 'string') continue;
      if (p.decision === 'allow') {
        setOf(approvals, sessionId).add(p.tool_name);
        setOf(denials, sessionId).delete(p.tool_name);
      } else if (p.decision === 'deny') {
        setOf(denials, sessionId).add(p.tool_name);
        setOf(approvals, sessionId).delete(p.tool_name);
      }
    }
  }

  /** The PATCH under the session's lock: queued while a turn holds the session, else applied at once. */
  async function swapOrQueue(sessionId: string, model: string | null) {
    const session = await openSession(sessionId);
    if (session.current_turn_id !== null) {
      await deps.db
        .updateTable('sessions')
        .set({ queued_swap: 1, queued_model: model })
        .where('id', '=', sessionId)
        .execute();
      // the model the swap will apply at the turn boundary (null: the routed one), not the current one
      const shown =
        model === null
          ? routedModelOf(session.workspace_path)
          : (deps.policy.current().resolveRef(model) ?? model);
      return {
        id: sessionId,
        active_model: shown,
        swap_queued: true,
        swap_queued_until_turn: session.current_turn_id,
      };
    }
    // a PATCH between turns overrides a swap queued before (applied at a restart's recovery otherwise)
    await deps.db
      .updateTable('sessions')
      .set({ queued_swap: 0, queued_model: null })
      .where('id', '=', sessionId)
      .execute();
    const active = await applySwap(sessionId, model);
    return { id: sessionId, active_model: active, swap_queued: false };
  }

  /** The model of a session without a pinned choice: its workspace's default, else the global default. */
  function routedModelOf(workspacePath: string): string {
    const policy = deps.policy.current();
    const ws = policy.workspaces.find((w) => w.test(workspacePath))?.use;
    return (ws && policy.resolveRef(ws)) ?? policy.globalDefault;
  }

  /** `null` returns the session to routed models: workspace default, else the global default. */
  async function applySwap(sessionId: string, model: string | null): Promise<string> {
    const session = await getSession(deps.db, sessionId);
    const policy = deps.policy.current();
    const now = formatUs(deps.clock.nowUs());
    if (model === null) {
      const fallback = session ? routedModelOf(session.workspace_path) : policy.globalDefault;
      await setActiveModel(deps.db, sessionId, fallback, now, false);
      return fallback;
    }
    const id = policy.resolveRef(model) ?? model;
    await setActiveModel(deps.db, sessionId, id, now, true);
    return id;
  }

  return {
    async submit(input) {
      refuseWhileStopping(stopping);
      const session = await openSession(input.sessionId);
      const { content, alias } = stripAliasPrefix(input.content, (ref) =>
        deps.policy.current().resolveRef(ref),
      );
      if (!content.some((b) => (b.type === 'text' && b.text.trim() !== '') || b.type === 'image'))
        throw new SvcError('invalid_content', {
          message: 'content: the message has no text or image',
          details: { field: 'content' },
        });
      const override = input.perMessageOverride ?? alias;
      await loadSessionAnswers(session.id);
      const started = await startTurn(full, {
        session,
        content,
        override: override ?? null,
        worker: null,
        ...hooks,
      });
      // the stop began while this submission was on its way (a request begun before the signal is let
      // finish): its turn is cancelled like the ones running then, not left to run on a closing server
      if (stopping !== null) {
        started.handle.cancelReason ??= stopping;
        started.handle.controller.abort();
      }
      return {
        turn_id: started.handle.turnId,
        session_id: session.id,
        submitted_at: started.submittedAt,
        user_message_id: started.userMessageId,
      };
    },

    async cancel(sessionId, turnId, reason) {
      // an ended session is refused by the routes (REST and socket); DELETE cancels the turn of the session it
      // has just ended, a submission that claimed it before the end included
      if (!(await getSession(deps.db, sessionId)))
        throw new SvcError('session_not_found', { message: `no session ${sessionId}` });
      const handle = turns.get(turnId);
      if (!handle || handle.sessionId !== sessionId) {
        await requireTurn(sessionId, turnId);
        throw new SvcError('turn_already_completed', { message: `turn ${turnId} has already ended` });
      }
      if (handle.cancelReason !== null) {
        // spec 2: a second cancel is a no-op, logged as a warning, with no canonical event
        deps.bus.publish({
          type: 'bus.handler_warning',
          actor: 'system',
          session_id: sessionId,
          turn_id: turnId,
          payload: {
            subscriber: 'turn-engine',
            event_id: turnId,
            event_type: 'turn.cancelled',
            message: 'turn is already cancelling',
          },
        });
        return { turn_id: turnId, cancellation_initiated: true };
      }
      handle.cancelReason = reason ?? 'user_cancelled';
      handle.controller.abort();
      return { turn_id: turnId, cancellation_initiated: true };
    },

    async confirm(input) {
      // an ended session's requests were settled when its turn was cancelled: a late answer is 409 applied false
      if (!(await getSession(deps.db, input.sessionId)))
        throw new SvcError('session_not_found', { message: `no session ${input.sessionId}` });
      if (turns.get(input.turnId)?.sessionId !== input.sessionId)
        await requireTurn(input.sessionId, input.turnId);
      let applied: boolean;
      try {
        applied = confirmations.answer(input);
      } catch (err) {
        if (!(err instanceof SvcError) || err.code !== 'confirmation_not_found') throw err;
        applied = await answerFromTrace(deps.db, input);
      }
      return { request_id: input.requestId, decision: input.decision, applied };
    },

    async setActiveModel(sessionId, model) {
      await openSession(sessionId); // an unknown or ended session is refused at once, lock or not
      return swapLock.run(sessionId, () => swapOrQueue(sessionId, model));
    },

    activeTurns: () => turns.size,

    forgetSession(sessionId) {
      workspaceRoots.forget(sessionId);
    },

    async applyQueuedSwaps() {
      const queued = await deps.db
        .selectFrom('sessions')
        .select('id')
        .where('queued_swap', '=', 1)
        .where('current_turn_id', 'is', null)
        .execute();
      for (const q of queued) await swapLock.run(q.id, () => applyQueuedSwap(q.id));
    },

    async cancelAll(reason) {
      stopping ??= reason;
      const running = [...turns.values()];
      for (const h of running) {
        h.cancelReason ??= reason;
        h.controller.abort();
      }
      await Promise.allSettled(running.map((h) => h.done));
    },
  };
}

// --- internal ---

/** A submission that arrives once the stop has cancelled the running turns is refused (503). */
function refuseWhileStopping(stopping: string | null): void {
  if (stopping !== null)
    throw new SvcError('service_shutting_down', {
      message: 'The agent server is shutting down; send the turn again once it is back.',
    });
}

/** The session's set in `sets`, created empty on first use. */
function setOf(sets: Map<string, Set<string>>, sessionId: string): Set<string> {
  let set = sets.get(sessionId);
  if (!set) {
    set = new Set();
    sets.set(sessionId, set);
  }
  return set;
}

/**
 * An `@alias ` prefix on the first text block picks the model for this turn (slot 1) and is removed before
 * the model sees the text; a prefix that names no model is left as written.
 */
export function stripAliasPrefix(
  content: ContentBlock[],
  resolve: (ref: string) => string | undefined,
): { content: ContentBlock[]; alias: string | null } {
  const i = content.findIndex((b) => b.type === 'text');
  if (i < 0) return { content, alias: null };
  const block = content[i] as { type: 'text'; text: string };
  const m = /^@(\S+)\s+/.exec(block.text);
  if (!m || resolve(m[1]) === undefined) return { content, alias: null };
  const next = [...content];
  next[i] = { ...block, text: block.text.slice(m[0].length) };
  return { content: next, alias: m[1] };
}
