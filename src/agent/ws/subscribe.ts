/**
 * @module One `subscribe` frame answered (spec 2 §WebSocket stream, seam rules): filter resolved, session
 * checked, then the ack and either the snapshot or the replay from the trace store. The replay runs after
 * the trace writer flushed and stops at the connection's accept fence, so every persisted event published
 * before the accept is replayed and every event after it is in the connection's queue: the caller drains
 * that queue skipping ids at or below `lastSentId`, and each event arrives exactly once, in id order.
 */
import type { Kysely } from 'kysely';
import { idTimeMs } from '../../lib/ids.ts';
import type { Database } from '../../store/schema.ts';
import { getSession } from '../sessions/store.ts';
import { type CompiledFilter, compileFilter, resolveFilter } from './filter.ts';
import { REPLAY_CAP, type ServerFrame, type SubscribeErrorCode, type SubscribeFrame } from './frames.ts';
import {
  countReplay,
  REPLAY_PAGE,
  type ReplayQuery,
  readReplayPage,
  readSnapshot,
  sessionTree,
} from './replay.ts';

/** spec 1 §Limits: the trace-retention window; an older cursor may point at swept events. */
export const TRACE_RETENTION_MS = 90 * 24 * 3600 * 1000;

export interface SubscribeContext {
  db: Kysely<Database>;
  sessionId: string;
  /** Id of the last event published before the accept (null: none yet). */
  fence: string | null;
  /**
   * Id of the last event published so far when the session has no turn in flight (undefined when it has):
   * the engine writes a turn's rows before its end event, so the tables then reflect every event up to it.
   */
  settledFence(): string | null | undefined;
  /** Id of the last event published so far (null: none yet). */
  lastPublished(): string | null;
  /** Commits every event the trace writer has queued. */
  flush(): Promise<void>;
  nowMs(): number;
  /** Queues a frame that is not a live event (ack, snapshot, replayed events). */
  send(frame: ServerFrame): void;
  /** Resolves once the queued frames went out, or the connection closed. */
  drained(): Promise<void>;
  isOpen(): boolean;
}

export type SubscribeOutcome =
  | { ok: true; filter: CompiledFilter; lastSentId: string | null }
  | { ok: false };

export async function runSubscribe(ctx: SubscribeContext, frame: SubscribeFrame): Promise<SubscribeOutcome> {
  const fail = (code: SubscribeErrorCode, message: string): SubscribeOutcome => {
    ctx.send({ type: 'subscribe_error', code, message });
    return { ok: false };
  };
  const resolved = resolveFilter(frame.filter);
  if ('invalid' in resolved) return fail('invalid_filter', resolved.invalid);
  const filter = compileFilter(resolved.filter);
  const ack = (since: string | null, snapshot: boolean, count: number) =>
    ctx.send({
      type: 'subscribe_ack',
      resolved_filter: resolved.filter,
      since,
      snapshot,
      replay_event_count: count,
    });

  if (frame.snapshot) {
    // spec 2: after a snapshot only events above snapshot_at_event_id follow; `since` is not used
    const settled = ctx.settledFence();
    const snap = await readSnapshot(ctx.db, ctx.sessionId);
    if (!snap) return fail('session_not_found', `session ${ctx.sessionId} no longer exists`);
    // The snapshot shows the session as read now. Idle before the read and still idle in it: it reflects
    // every event published before the read, so the fence moves up to there (turns run between the accept
    // and this frame are not sent again). Otherwise it stays at the accept: what followed is sent, at worst
    // repeating part of what the snapshot already shows, never missing any of it.
    const at = settled !== undefined && snap.session.current_turn_id === null ? settled : ctx.fence;
    ack(null, true, 0);
    ctx.send({ type: 'snapshot', ...snap, snapshot_at_event_id: at });
    return { ok: true, filter, lastSentId: at };
  }
  const sessionIds = filter.resolved.include_worker_sessions
    ? await sessionTree(ctx.db, ctx.sessionId)
    : (await getSession(ctx.db, ctx.sessionId))
      ? [ctx.sessionId]
      : [];
  if (sessionIds.length === 0) return fail('session_not_found', `session ${ctx.sessionId} no longer exists`);
  if (frame.since === null) {
    ack(null, false, 0);
    return { ok: true, filter, lastSentId: null };
  }
  const since = frame.since;
  if (idTimeMs(since) < ctx.nowMs() - TRACE_RETENTION_MS)
    return fail(
      'cursor_expired',
      `since ${since} is older than the 90-day trace retention; subscribe again with snapshot: true`,
    );
  await ctx.flush();
  const query: ReplayQuery = {
    sessionIds,
    since,
    until: ctx.fence,
    types: filter.persistedTypes,
    actors: filter.resolved.actors,
  };
  const count = await countReplay(ctx.db, query, REPLAY_CAP);
  if (count > REPLAY_CAP)
    return fail(
      'replay_too_large',
      `more than ${REPLAY_CAP} events follow ${since}; subscribe again with snapshot: true and read older history over REST`,
    );
  ack(since, false, count);
  const last = await replay(ctx, query);
  // The queue (events after the accept) is skipped up to `since`: a client that received events above the
  // fence on another socket (a reconnect opened before the old one dropped) gets none of them twice. A
  // `since` above every event published names none (a cursor of the future, of another clock): skipping up
  // to it would drop every live event below it, so the queue is then skipped up to the fence only.
  const published = ctx.lastPublished();
  const floor = published === null || since > published ? ctx.fence : since;
  return { ok: true, filter, lastSentId: last ?? floor };
}

// --- internal ---

/** Sends the replay page by page, each after the previous one went out; returns the last id sent. */
async function replay(ctx: SubscribeContext, query: ReplayQuery): Promise<string | undefined> {
  let after = query.since;
  let last: string | undefined;
  for (;;) {
    const page = await readReplayPage(ctx.db, query, after, REPLAY_PAGE);
    for (const event of page) ctx.send({ type: 'event', event });
    if (page.length > 0) last = after = page[page.length - 1].id;
    if (page.length < REPLAY_PAGE) return last;
    await ctx.drained();
    if (!ctx.isOpen()) return last;
  }
}
