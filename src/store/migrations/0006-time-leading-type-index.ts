import { type Kysely, sql } from 'kysely';

/**
 * Frozen. `events_type_time` (type, timestamp_us) took one B-tree leaf per event type in every commit: a
 * gateway call's four events (route.decided, llm.call_started, llm.call_completed, turn.completed) landed
 * on four pages of it, three of the nine WAL frames a call's commit writes when no page splits (issue 13's
 * CPU target: the commit is the call's largest synchronous cost before its last byte). Keyed time first,
 * every new event lands on the index's last page. Reads by type within a time window (spend before a
 * budget check, startup gaps, analytics) still read one range of it; the two reads by type that are not
 * bounded in time get small partial indexes no gateway call writes: the agent server's open turns
 * (`turn.started`, recovery at start) and failed calls (`llm.call_failed`, the reliability report).
 * Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS events_type_time`.execute(db);
  await sql`CREATE INDEX events_time_type ON events (timestamp_us, type)`.execute(db);
  await sql`CREATE INDEX events_turn_started ON events (session_id, turn_id) WHERE type = 'turn.started'`.execute(
    db,
  );
  await sql`CREATE INDEX events_failed_call ON events (timestamp_us) WHERE type = 'llm.call_failed'`.execute(
    db,
  );
  await sql`PRAGMA user_version = 6`.execute(db);
}
