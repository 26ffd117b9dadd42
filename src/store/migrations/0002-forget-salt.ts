import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';

/**
 * Frozen. Seeds the per-store secret salt of `svc user forget` pseudonyms in store_meta, so every
 * store has one from birth and every backup carries it (spec 3 §forget). Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const salt = randomBytes(32).toString('hex');
  await sql`INSERT OR IGNORE INTO store_meta (key, value) VALUES ('forget_salt', ${salt})`.execute(db);
  await sql`PRAGMA user_version = 2`.execute(db);
}
