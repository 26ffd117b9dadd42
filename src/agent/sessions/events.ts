/**
 * @module Trace-store reads of one session's events for GET /sessions/{id}/events (DECISIONS §5:
 * `types`, `turn_id`, `after` cursor, `limit`), oldest first, as spec 2 envelopes.
 */
import type { Kysely } from 'kysely';
import type { EventEnvelope } from '../../events/envelope.ts';
import { SvcError } from '../../lib/errors.ts';
import { EVENT_COLUMNS } from '../../store/dialect.ts';
import type { Database, EventRow } from '../../store/schema.ts';

export interface ListEventsQuery {
  types?: readonly string[];
  turn_id?: string;
  /** Event id cursor: only events after it. */
  after?: string;
  limit: number;
}

/** The stored columns of an event envelope (spec 2 "Event"), for every read that returns envelopes: the columns
 * an event is appended with. */
export const ENVELOPE_COLUMNS = EVENT_COLUMNS;

/**
 * One page in id order; next_cursor is the last id of the page when more match. An `after` that is a stored
 * event of an unrelated session (not this one, nor one of its workers) throws validation_error naming it:
 * its position says nothing about this session's events. An event id not stored (a streaming-only event's,
 * received over the WebSocket) is a position in id order and accepted.
 */
export async function listEvents(
  db: Kysely<Database>,
  sessionId: string,
  query: ListEventsQuery,
): Promise<{ events: EventEnvelope[]; next_cursor: string | null }> {
  if (query.after !== undefined) await checkCursor(db, sessionId, query.after);
  let q = db.selectFrom('events').select(ENVELOPE_COLUMNS).where('session_id', '=', sessionId);
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

// --- internal ---

async function checkCursor(db: Kysely<Database>, sessionId: string, after: string): Promise<void> {
  const row = await db
    .selectFrom('events')
    .leftJoin('sessions', 'sessions.id', 'events.session_id')
    .select(['events.session_id as session_id', 'sessions.parent_session_id as parent_session_id'])
    .where('events.id', '=', after)
    .executeTakeFirst();
  if (row === undefined || row.session_id === sessionId || row.parent_session_id === sessionId) return;
  throw new SvcError('validation_error', {
    message: `after: ${after} is an event of another session, not a cursor of session ${sessionId}.`,
    details: { field: 'after' },
  });
}

type EventColumns = Omit<
  EventRow,
  'payload_json' | 'model' | 'provider' | 'gateway_key_id' | 'user_id' | 'team_id' | 'cost_usd'
>;

function toEnvelope(row: EventColumns): EventEnvelope {
  return { ...row, payload: JSON.parse(row.payload), sensitivity: row.sensitivity } as EventEnvelope;
}
