/**
 * @module Trace-store reads of one session's events for GET /sessions/{id}/events (DECISIONS §5:
 * `types`, `turn_id`, `after` cursor, `limit`), oldest first, as spec 2 envelopes.
 */
import type { Kysely } from 'kysely';
import type { EventEnvelope } from '../../events/envelope.ts';
import type { Database, EventRow } from '../../store/schema.ts';

export interface ListEventsQuery {
  types?: readonly string[];
  turn_id?: string;
  /** Event id cursor: only events after it. */
  after?: string;
  limit: number;
}

/** One page in id order; next_cursor is the last id of the page when more match. */
export async function listEvents(
  db: Kysely<Database>,
  sessionId: string,
  query: ListEventsQuery,
): Promise<{ events: EventEnvelope[]; next_cursor: string | null }> {
  let q = db
    .selectFrom('events')
    .select([
      'id',
      'timestamp',
      'timestamp_us',
      'session_id',
      'turn_id',
      'type',
      'actor',
      'payload',
      'parent_event_id',
      'sensitivity',
    ])
    .where('session_id', '=', sessionId);
  if (query.types !== undefined && query.types.length > 0) q = q.where('type', 'in', [...query.types]);
  if (query.turn_id !== undefined) q = q.where('turn_id', '=', query.turn_id);
  if (query.after !== undefined) q = q.where('id', '>', query.after);
  const rows = await q
    .orderBy('id', 'asc')
    .limit(query.limit + 1)
    .execute();
  const more = rows.length > query.limit;
  const page = more ? rows.slice(0, query.limit) : rows;
  return { events: page.map(toEnvelope), next_cursor: more ? (page.at(-1)?.id ?? null) : null };
}

export interface UnfinishedTurn {
  session_id: string;
  turn_id: string;
  /** The turn.started event, null when the process died before it was committed. */
  started_event_id: string | null;
}

/**
 * Agent turns a dead process left open: a session's turn.started without turn.completed/turn.cancelled,
 * or a session still holding current_turn_id (its turn.started may not have been committed).
 */
export async function findUnfinishedTurns(db: Kysely<Database>): Promise<UnfinishedTurn[]> {
  const rows = await db
    .selectFrom('events as s')
    .select(['s.session_id', 's.turn_id', 's.id'])
    .where('s.type', '=', 'turn.started')
    .where('s.turn_id', 'is not', null)
    .where('s.session_id', 'is not', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('events as e')
            .select('e.id')
            .whereRef('e.turn_id', '=', 's.turn_id')
            .where('e.type', 'in', ['turn.completed', 'turn.cancelled']),
        ),
      ),
    )
    .orderBy('s.id', 'asc')
    .execute();
  const found = new Map<string, UnfinishedTurn>();
  for (const r of rows) {
    found.set(r.turn_id as string, {
      session_id: r.session_id as string,
      turn_id: r.turn_id as string,
      started_event_id: r.id,
    });
  }
  const held = await db
    .selectFrom('sessions')
    .select(['id', 'current_turn_id'])
    .where('current_turn_id', 'is not', null)
    .execute();
  for (const s of held) {
    const turnId = s.current_turn_id as string;
    if (found.has(turnId)) continue;
    const ended = await db
      .selectFrom('events')
      .select('id')
      .where('turn_id', '=', turnId)
      .where('type', 'in', ['turn.completed', 'turn.cancelled'])
      .executeTakeFirst();
    if (!ended) found.set(turnId, { session_id: s.id, turn_id: turnId, started_event_id: null });
  }
  return [...found.values()];
}

// --- internal ---

type EventColumns = Omit<
  EventRow,
  'payload_json' | 'model' | 'provider' | 'gateway_key_id' | 'user_id' | 'team_id' | 'cost_usd'
>;

function toEnvelope(row: EventColumns): EventEnvelope {
  return { ...row, payload: JSON.parse(row.payload), sensitivity: row.sensitivity } as EventEnvelope;
}
