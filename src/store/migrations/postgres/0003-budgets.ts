import { type Kysely, sql } from 'kysely';

/**
 * Frozen. Spend caps shared by every replica (PostgreSQL only; a SQLite gateway keeps them in memory):
 * budget_windows holds the settled spend of a key in one UTC day or month (exact numeric), seeded from
 * the trace when first needed, and whether its 80 % alert went out; budget_holds holds each admitted
 * request's worst-case reservation until it is settled or released. A hold names the process that took
 * it (origin, like events.origin), so the holds of a replica that died can be dropped, and expires as a
 * backstop. Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE budget_windows (
      key_id text COLLATE "C" NOT NULL,
      cap_kind text COLLATE "C" NOT NULL CHECK (cap_kind IN ('daily', 'monthly')),
      window_start_us bigint NOT NULL,
      spent_usd numeric NOT NULL DEFAULT 0,
      alerted integer NOT NULL DEFAULT 0 CHECK (alerted IN (0, 1)),
      PRIMARY KEY (key_id, cap_kind, window_start_us)
    )`.execute(db);
  await sql`
    CREATE TABLE budget_holds (
      id text COLLATE "C" PRIMARY KEY,
      key_id text COLLATE "C" NOT NULL,
      amount_usd numeric NOT NULL,
      expires_us bigint NOT NULL,
      origin text COLLATE "C" DEFAULT current_setting('svc.origin', true)
    )`.execute(db);
  await sql`CREATE INDEX budget_holds_key ON budget_holds (key_id, expires_us)`.execute(db);
  await sql`UPDATE store_meta SET value = '3' WHERE key = 'schema_version'`.execute(db);
}
