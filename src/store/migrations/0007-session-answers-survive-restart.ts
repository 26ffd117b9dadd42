import { type Kysely, sql } from 'kysely';

/**
 * Frozen. What a running svc serve held only in memory and a restart lost: a model swap queued for a
 * session's turn boundary (`sessions.queued_swap` 1 with `queued_model`, null = back to routed models),
 * and whether a tool's output was cut (`tool_calls.truncated`, 1/0; null on rows written before), which
 * recovery needs for the tool.completed it writes. Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of [
    sql`ALTER TABLE sessions ADD COLUMN queued_swap INTEGER NOT NULL DEFAULT 0`,
    sql`ALTER TABLE sessions ADD COLUMN queued_model TEXT`,
    sql`ALTER TABLE tool_calls ADD COLUMN truncated INTEGER`,
    sql`PRAGMA user_version = 7`,
  ])
    await statement.execute(db);
}
