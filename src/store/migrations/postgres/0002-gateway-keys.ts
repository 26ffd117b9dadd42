import { type Kysely, sql } from 'kysely';

/**
 * Frozen. Gateway keys in a table (PostgreSQL only; SQLite deployments keep keys.json): one row per key
 * record of spec 1 §Gateway key record, `extra` holding fields a newer svc may add (the file keeps them
 * too), and `version` from a sequence, bumped by every write, so a replica can tell cheaply whether
 * anything changed (its fallback when a NOTIFY on svc_gateway_keys was missed). Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE SEQUENCE gateway_keys_version`.execute(db);
  await sql`
    CREATE TABLE gateway_keys (
      key_id text COLLATE "C" PRIMARY KEY,
      secret_hash text COLLATE "C" NOT NULL UNIQUE,
      name text NOT NULL,
      workspace_path text NOT NULL,
      allowed_models text CHECK (json_typeof(allowed_models::json) = 'array'),
      daily_cap_usd text,
      monthly_cap_usd text,
      user_id text COLLATE "C",
      team_id text COLLATE "C",
      status text COLLATE "C" NOT NULL CHECK (status IN ('active', 'revoked')),
      revoked_at text COLLATE "C",
      grace_period_until text COLLATE "C",
      created_at text COLLATE "C" NOT NULL,
      extra text NOT NULL DEFAULT '{}' CHECK ((extra::json) IS NOT NULL),
      version bigint NOT NULL DEFAULT nextval('gateway_keys_version')
    )`.execute(db);
  await sql`UPDATE store_meta SET value = '2' WHERE key = 'schema_version'`.execute(db);
}
