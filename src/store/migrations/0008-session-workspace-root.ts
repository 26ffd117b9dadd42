import { type Kysely, sql } from 'kysely';

/**
 * Frozen. `sessions.workspace_root`: the real path of the session's workspace when it was created, the
 * folder its tools stay confined to. It was held only in memory, so a restarted svc serve resolved the
 * folder again and followed a workspace swapped for a symlink while it was down. Null on rows written
 * before (resolved when the server first meets the session). Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of [
    sql`ALTER TABLE sessions ADD COLUMN workspace_root TEXT`,
    sql`PRAGMA user_version = 8`,
  ])
    await statement.execute(db);
}
