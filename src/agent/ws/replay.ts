/**
 * @module Trace-store reads behind a subscription: the session and its worker sessions, the replay after a
 * `since` cursor up to the connection's accept fence (counted first against the 10,000 cap, then read in
 * pages), and the snapshot (session fields and the 50 most recent messages).
 */
import { type Kysely, sql } from 'kysely';
import type { EventType } from '../../events/catalog.ts';
import type { EventEnvelope } from '../../events/envelope.ts';
import type { Database } from '../../store/schema.ts';
import { encodeSession } from '../sessions/encode.ts';
import { ENVELOPE_COLUMNS } from '../sessions/events.ts';
import { listMessages } from '../sessions/messages.ts';
import { getSession } from '../sessions/store.ts';
import type { SnapshotSession } from './frames.ts';

/** spec 2 §Limits: snapshot message cap. */
export const SNAPSHOT_MESSAGES = 50;
/** Replayed events read from the store at a time (and queued before the next read). */
export const REPLAY_PAGE = 500;

export interface ReplayQuery {
  sessionIds: readonly string[];
  /** Only events after this id. */
  since: string;
  /** Only events at or before this id (the accept fence); null: no upper bound. */
  until: string | null;
  /** Persisted types the filter lets through. */
  types: readonly EventType[];
  actors: readonly string[] | null;
}

/** The session and, through parent_session_id, every worker session below it. */
export async function sessionTree(db: Kysely<Database>, sessionId: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    WITH RECURSIVE tree(id) AS (
      SELECT id FROM sessions WHERE id = ${sessionId}
      UNION
      SELECT s.id FROM sessions s JOIN tree t ON s.parent_session_id = t.id
    )
    SELECT id FROM tree`.execute(db);
  return rows.map((r) => r.id);
}

/** Events the replay would send, counted up to `cap + 1` (enough to tell "more than the cap"). */
export async function countReplay(db: Kysely<Database>, q: ReplayQuery, cap: number): Promise<number> {
  if (q.types.length === 0 || q.sessionIds.length === 0) return 0;
  const inner = replayBase(db, q)
    .select('id')
    .limit(cap + 1);
  const row = await db
    .selectFrom(inner.as('r'))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The next page of the replay after `afterId`, in id order. */
export async function readReplayPage(
  db: Kysely<Database>,
  q: ReplayQuery,
  afterId: string,
  limit: number,
): Promise<EventEnvelope[]> {
  if (q.types.length === 0 || q.sessionIds.length === 0) return [];
  const rows = await replayBase(db, { ...q, since: afterId })
    .select(ENVELOPE_COLUMNS)
    .orderBy('id', 'asc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) }) as EventEnvelope);
}

/** Session fields and the most recent messages, or undefined when the session is gone. */
export async function readSnapshot(
  db: Kysely<Database>,
  sessionId: string,
): Promise<
  { session: SnapshotSession; messages: Awaited<ReturnType<typeof listMessages>>['messages'] } | undefined
> {
  const row = await getSession(db, sessionId);
  if (!row) return undefined;
  const s = encodeSession(row);
  const { messages } = await listMessages(db, sessionId, { limit: SNAPSHOT_MESSAGES });
  return {
    session: {
      id: s.id,
      workspace_path: s.workspace_path,
      active_model: s.active_model,
      routing_policy_version: s.routing_policy_version,
      cost_so_far_usd: s.cost_so_far_usd,
      turn_count: s.turn_count,
      current_turn_id: s.current_turn_id,
      current_turn_status: s.current_turn_status,
    },
    messages,
  };
}

// --- internal ---

function replayBase(db: Kysely<Database>, q: ReplayQuery) {
  let query = db
    .selectFrom('events')
    .where('session_id', 'in', [...q.sessionIds])
    .where('id', '>', q.since)
    .where('type', 'in', [...q.types]);
  if (q.until !== null) query = query.where('id', '<=', q.until);
  if (q.actors !== null)
    query =
      q.actors.length === 0 ? query.where(sql<boolean>`1 = 0`) : query.where('actor', 'in', [...q.actors]);
  return query;
}
