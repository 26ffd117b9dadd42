import { type Kysely, sql } from 'kysely';

/**
 * Frozen. Every index on `events` is written by every gateway call's commit, the call's one synchronous
 * cost before its last byte (issue 13's CPU target): each index is a B-tree insert per row and a WAL frame
 * per commit. Five indexes of 0001 serve no read path since 0004: time windows by model, provider,
 * gateway_key_id and team_id read the covering `events_spend` (which holds each of them), and nothing reads
 * `timestamp_us` alone. Dropped; `events_type_time`, `events_user` (export and forget), `events_turn`,
 * `events_session`, `events_spend` and `events_route` stay. Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const name of ['events_time', 'events_model', 'events_provider', 'events_gateway_key', 'events_team'])
    await sql`DROP INDEX IF EXISTS ${sql.raw(name)}`.execute(db);
  await sql`PRAGMA user_version = 5`.execute(db);
}
