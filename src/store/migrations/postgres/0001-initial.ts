import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';

/**
 * Frozen. The PostgreSQL schema of SQLite's migrations 0001–0003 (events with payload_json and the
 * generated read-path columns, sessions with sticky, messages, tool_calls, store_meta with the forget
 * salt). Text is COLLATE "C" so ids and timestamps order by bytes as on SQLite; payload stays text (the
 * JSON exactly as written). Generated columns read it as json after turning the escape \u0000, which
 * PostgreSQL refuses to extract, into \ufffd (a payload carrying one is kept whole); their cast also
 * refuses a payload that is not JSON. payload_json is VIRTUAL from PostgreSQL 18 and STORED before.
 * events.origin (PostgreSQL only) names the process that inserted the row, from the session setting
 * svc.origin, so a replica's start can tell the open turns of a dead replica from a live one's.
 * Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const r = await sql<{ v: string }>`SELECT current_setting('server_version_num') AS v`.execute(db);
  const serverVersion = Number(r.rows[0]?.v ?? 0);
  if (serverVersion < 140000) throw new Error(`PostgreSQL 14 or newer is needed (server ${serverVersion})`);
  const aliasKind = serverVersion >= 180000 ? 'VIRTUAL' : 'STORED';
  const json = String.raw`replace(payload, '\u0000', '\ufffd')::json`;
  const field = (name: string) =>
    `${name} text COLLATE "C" GENERATED ALWAYS AS (${json} ->> '${name}') STORED`;
  await sql
    .raw(`
    CREATE TABLE events (
      id text COLLATE "C" PRIMARY KEY,
      timestamp text COLLATE "C" NOT NULL,
      timestamp_us bigint NOT NULL,
      session_id text COLLATE "C",
      turn_id text COLLATE "C",
      type text COLLATE "C" NOT NULL,
      actor text COLLATE "C" NOT NULL,
      payload text NOT NULL,
      parent_event_id text COLLATE "C",
      sensitivity text COLLATE "C" NOT NULL,
      origin text COLLATE "C" DEFAULT current_setting('svc.origin', true),
      payload_json json GENERATED ALWAYS AS (payload::json) ${aliasKind},
      ${['model', 'provider', 'gateway_key_id', 'user_id', 'team_id', 'cost_usd'].map(field).join(',\n      ')}
    )`)
    .execute(db);
  for (const stmt of [
    sql`CREATE INDEX events_type_time ON events (type, timestamp_us)`,
    sql`CREATE INDEX events_time ON events (timestamp_us)`,
    sql`CREATE INDEX events_model ON events (model, timestamp_us) WHERE model IS NOT NULL`,
    sql`CREATE INDEX events_provider ON events (provider, timestamp_us) WHERE provider IS NOT NULL`,
    sql`CREATE INDEX events_gateway_key ON events (gateway_key_id, timestamp_us) WHERE gateway_key_id IS NOT NULL`,
    sql`CREATE INDEX events_user ON events (user_id, id) WHERE user_id IS NOT NULL`,
    sql`CREATE INDEX events_team ON events (team_id, timestamp_us) WHERE team_id IS NOT NULL`,
    sql`CREATE INDEX events_turn ON events (turn_id, id) WHERE turn_id IS NOT NULL`,
    sql`CREATE INDEX events_session ON events (session_id, id) WHERE session_id IS NOT NULL`,
  ]) {
    await stmt.execute(db);
  }
  await sql`
    CREATE TABLE sessions (
      id text COLLATE "C" PRIMARY KEY,
      workspace_path text COLLATE "C" NOT NULL,
      active_model text COLLATE "C" NOT NULL,
      created_at text COLLATE "C" NOT NULL,
      updated_at text COLLATE "C" NOT NULL,
      routing_policy_version text COLLATE "C" NOT NULL,
      turn_count integer NOT NULL DEFAULT 0,
      cost_so_far_usd text COLLATE "C" NOT NULL DEFAULT '0',
      current_turn_id text COLLATE "C",
      current_turn_status text COLLATE "C" CHECK (current_turn_status IN ('in_flight')),
      is_worker integer NOT NULL DEFAULT 0 CHECK (is_worker IN (0, 1)),
      parent_session_id text COLLATE "C" REFERENCES sessions (id) ON DELETE CASCADE,
      ended_at text COLLATE "C",
      disposition text COLLATE "C",
      sticky integer NOT NULL DEFAULT 0
    )`.execute(db);
  await sql`CREATE INDEX sessions_recent ON sessions (created_at DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX sessions_workspace ON sessions (workspace_path, created_at DESC)`.execute(db);
  await sql`CREATE INDEX sessions_parent ON sessions (parent_session_id) WHERE parent_session_id IS NOT NULL`.execute(
    db,
  );
  await sql`
    CREATE TABLE messages (
      id text COLLATE "C" PRIMARY KEY,
      session_id text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      turn_id text COLLATE "C",
      role text COLLATE "C" NOT NULL,
      content text NOT NULL CHECK ((content::json) IS NOT NULL),
      metadata text NOT NULL DEFAULT '{}' CHECK ((metadata::json) IS NOT NULL),
      status text COLLATE "C" NOT NULL DEFAULT 'completed',
      created_at text COLLATE "C" NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX messages_session ON messages (session_id, id)`.execute(db);
  await sql`
    CREATE TABLE tool_calls (
      id text COLLATE "C" PRIMARY KEY,
      session_id text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      turn_id text COLLATE "C" NOT NULL,
      message_id text COLLATE "C",
      tool_use_id text COLLATE "C" NOT NULL,
      tool_name text COLLATE "C" NOT NULL,
      input text NOT NULL CHECK ((input::json) IS NOT NULL),
      output text,
      status text COLLATE "C" NOT NULL,
      error_class text COLLATE "C",
      started_at text COLLATE "C" NOT NULL,
      completed_at text COLLATE "C"
    )`.execute(db);
  await sql`CREATE INDEX tool_calls_session ON tool_calls (session_id, turn_id)`.execute(db);
  await sql`CREATE TABLE store_meta (key text COLLATE "C" PRIMARY KEY, value text NOT NULL)`.execute(db);
  const salt = randomBytes(32).toString('hex');
  await sql`INSERT INTO store_meta (key, value) VALUES ('forget_salt', ${salt}) ON CONFLICT DO NOTHING`.execute(
    db,
  );
  await sql`INSERT INTO store_meta (key, value) VALUES ('schema_version', '1')`.execute(db);
}
