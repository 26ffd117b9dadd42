import { type Kysely, sql } from 'kysely';

/**
 * Frozen. `events_type_time` (type, timestamp_us) took one B-tree leaf per event type in every commit: a
 * gateway call's four events (route.decided, llm.call_started, llm.call_completed, turn.completed) landed
 * on four pages of it, three of the nine WAL frames a call's commit writes when no page splits (issue 13's
 * CPU target: the commit is the call's largest synchronous cost before its last byte). Keyed time first,
 * every new event lands on the index's last page. Reads by type within a time window (spend before a
 * budget check, startup gaps, analytics) still read one range of it; the reads by type that are not
 * bounded in time get small partial indexes that no answered gateway call writes: the agent server's open
 * turns (`turn.started`, recovery at start), failed calls (`llm.call_failed`, the reliability report) and
 * the quota events by the identity they name (`svc user forget` finds a user's there).
 * Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of [
    sql`DROP INDEX IF EXISTS events_type_time`,
    sql`CREATE INDEX events_time_type ON events (timestamp_us, type)`,
    sql`CREATE INDEX events_turn_started ON events (session_id, turn_id) WHERE type = 'turn.started'`,
    sql`CREATE INDEX events_failed_call ON events (timestamp_us) WHERE type = 'llm.call_failed'`,
    sql`CREATE INDEX events_quota_identity ON events (json_extract(payload, '$.identity_id'))
      WHERE type IN ('quota.alert', 'gateway.quota_exceeded')`,
    sql`PRAGMA user_version = 6`,
  ])
    await statement.execute(db);
}
