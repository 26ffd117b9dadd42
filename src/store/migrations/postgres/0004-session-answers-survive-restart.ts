import { type Kysely, sql } from 'kysely';

/**
 * Frozen. SQLite's 0007: a model swap queued for a session's turn boundary (`sessions.queued_swap`,
 * `queued_model`) and `tool_calls.truncated`, so a restarted svc serve keeps them. Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE sessions ADD COLUMN queued_swap integer NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE sessions ADD COLUMN queued_model text COLLATE "C"`.execute(db);
  await sql`ALTER TABLE tool_calls ADD COLUMN truncated integer`.execute(db);
  await sql`UPDATE store_meta SET value = '4' WHERE key = 'schema_version'`.execute(db);
}
