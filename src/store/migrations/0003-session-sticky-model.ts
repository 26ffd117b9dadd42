import { type Kysely, sql } from 'kysely';

/**
 * Frozen. `sessions.sticky` is 1 when `active_model` is the user's own choice (POST /sessions with
 * `initial_active_model`, or PATCH with a model), which routing slot 2 (manual_sticky) proposes on every
 * turn; 0 when it only records the model the last turn was routed to. Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE sessions ADD COLUMN sticky INTEGER NOT NULL DEFAULT 0`.execute(db);
  await sql`PRAGMA user_version = 3`.execute(db);
}
