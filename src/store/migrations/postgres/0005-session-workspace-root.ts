import { type Kysely, sql } from 'kysely';

/**
 * Frozen. SQLite's 0008: `sessions.workspace_root`, the real path of the session's workspace when it was
 * created (null on rows written before), so a restarted svc serve keeps its tools confined there.
 * Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE sessions ADD COLUMN workspace_root text COLLATE "C"`.execute(db);
  await sql`UPDATE store_meta SET value = '5' WHERE key = 'schema_version'`.execute(db);
}
