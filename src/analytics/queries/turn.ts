/**
 * @module GET /analytics/turns/{turn_id} (spec 3): every event of one turn in id order, whether it is
 * still in flight (no terminator yet: turn.completed, turn.cancelled, or the gap a restart records for a
 * turn its crashed process left open; a gateway request refused at authentication ends with its
 * gateway.auth_failed, the only event it has), and the session's messages from the turn's start to its
 * end (or to now while in flight). No events: 404 turn_not_found (DECISIONS §5).
 */
import { type Kysely, sql } from 'kysely';
import { TURN_TERMINATORS } from '../../events/catalog.ts';
import { SvcError } from '../../lib/errors.ts';
import { formatUs } from '../../lib/time.ts';
import type { Database } from '../../store/schema.ts';

export interface TurnDrillDown {
  turn_id: string;
  session_id: string | null;
  in_flight: boolean;
  events: Array<{ id: string; timestamp: string; type: string; actor: string; payload: unknown }>;
  messages: Array<{ id: string; role: string; content: unknown; metadata: unknown; created_at: string }>;
}

export async function queryTurn(db: Kysely<Database>, turnId: string, nowUs: number): Promise<TurnDrillDown> {
  const events = await db
    .selectFrom('events')
    .select(['id', 'timestamp', 'session_id', 'type', 'actor', 'payload'])
    .where('turn_id', '=', turnId)
    .orderBy('id')
    .execute();
  if (events.length === 0) {
    throw new SvcError('turn_not_found', {
      message: `No events for turn ${JSON.stringify(turnId.slice(0, 60))}; check the id (the svc-request-id header of a gateway call, or a turn id of a session).`,
    });
  }
  const end = events.find((e) => ENDS_A_TURN.has(e.type));
  const start = events.find((e) => e.type === 'turn.started') ?? events[0];
  const sessionId = events[0].session_id;
  return {
    turn_id: turnId,
    session_id: sessionId,
    in_flight: end === undefined,
    events: events.map((e) => ({
      id: e.id,
      timestamp: e.timestamp,
      type: e.type,
      actor: e.actor,
      payload: JSON.parse(e.payload),
    })),
    messages:
      sessionId === null
        ? []
        : await readMessages(db, sessionId, turnId, start.timestamp, end?.timestamp ?? formatUs(nowUs)),
  };
}

// --- internal ---

/**
 * The events after which nothing of the turn runs: the turn terminators, and the 401 of a gateway
 * request refused at authentication (it answered the client; no turn.completed follows it).
 */
const ENDS_A_TURN: ReadonlySet<string> = new Set<string>([...TURN_TERMINATORS, 'gateway.auth_failed']);

/**
 * The session's messages created within [from, to], plus those stamped with the turn (its user message is
 * stored just before turn.started). Timestamps are fixed-width ISO 8601 UTC, so text order is time order.
 */
async function readMessages(
  db: Kysely<Database>,
  sessionId: string,
  turnId: string,
  from: string,
  to: string,
) {
  const r = await sql<{ id: string; role: string; content: string; metadata: string; created_at: string }>`
    SELECT id, role, content, metadata, created_at FROM messages
    WHERE session_id = ${sessionId}
      AND (turn_id = ${turnId} OR (created_at >= ${from} AND created_at <= ${to}))
    ORDER BY id`.execute(db);
  return r.rows.map((m) => ({
    id: m.id,
    role: m.role,
    content: JSON.parse(m.content),
    metadata: JSON.parse(m.metadata),
    created_at: m.created_at,
  }));
}
