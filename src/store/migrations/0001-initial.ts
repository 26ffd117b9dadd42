import { type Kysely, sql } from 'kysely';

/**
 * Frozen. Initial schema: events (with payload_json alias and generated read-path columns),
 * sessions, messages, tool_calls, store_meta. Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE events (
      id TEXT PRIMARY KEY NOT NULL,
      timestamp TEXT NOT NULL,
      timestamp_us INTEGER NOT NULL,
      session_id TEXT,
      turn_id TEXT,
      type TEXT NOT NULL,
      actor TEXT NOT NULL,
      payload TEXT NOT NULL CHECK (json_valid(payload)),
      parent_event_id TEXT,
      sensitivity TEXT NOT NULL,
      payload_json TEXT GENERATED ALWAYS AS (payload) VIRTUAL,
      model TEXT GENERATED ALWAYS AS (json_extract(payload, '$.model')) VIRTUAL,
      provider TEXT GENERATED ALWAYS AS (json_extract(payload, '$.provider')) VIRTUAL,
      gateway_key_id TEXT GENERATED ALWAYS AS (json_extract(payload, '$.gateway_key_id')) VIRTUAL,
      user_id TEXT GENERATED ALWAYS AS (json_extract(payload, '$.user_id')) VIRTUAL,
      team_id TEXT GENERATED ALWAYS AS (json_extract(payload, '$.team_id')) VIRTUAL,
      cost_usd TEXT GENERATED ALWAYS AS (json_extract(payload, '$.cost_usd')) VIRTUAL
    ) STRICT
  `.execute(db);
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
      id TEXT PRIMARY KEY NOT NULL,
      workspace_path TEXT NOT NULL,
      active_model TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      routing_policy_version TEXT NOT NULL,
      turn_count INTEGER NOT NULL DEFAULT 0,
      cost_so_far_usd TEXT NOT NULL DEFAULT '0',
      current_turn_id TEXT,
      current_turn_status TEXT CHECK (current_turn_status IN ('in_flight')),
      is_worker INTEGER NOT NULL DEFAULT 0 CHECK (is_worker IN (0, 1)),
      parent_session_id TEXT REFERENCES sessions (id) ON DELETE CASCADE,
      ended_at TEXT,
      disposition TEXT
    ) STRICT
  `.execute(db);
  await sql`CREATE INDEX sessions_recent ON sessions (created_at DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX sessions_workspace ON sessions (workspace_path, created_at DESC)`.execute(db);
  await sql`CREATE INDEX sessions_parent ON sessions (parent_session_id) WHERE parent_session_id IS NOT NULL`.execute(
    db,
  );
  await sql`
    CREATE TABLE messages (
      id TEXT PRIMARY KEY NOT NULL,
      session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      turn_id TEXT,
      role TEXT NOT NULL,
      content TEXT NOT NULL CHECK (json_valid(content)),
      metadata TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
      status TEXT NOT NULL DEFAULT 'completed',
      created_at TEXT NOT NULL
    ) STRICT
  `.execute(db);
  await sql`CREATE INDEX messages_session ON messages (session_id, id)`.execute(db);
  await sql`
    CREATE TABLE tool_calls (
      id TEXT PRIMARY KEY NOT NULL,
      session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      turn_id TEXT NOT NULL,
      message_id TEXT,
      tool_use_id TEXT NOT NULL,
      tool_name TEXT NOT NULL,
      input TEXT NOT NULL CHECK (json_valid(input)),
      output TEXT,
      status TEXT NOT NULL,
      error_class TEXT,
      started_at TEXT NOT NULL,
      completed_at TEXT
    ) STRICT
  `.execute(db);
  await sql`CREATE INDEX tool_calls_session ON tool_calls (session_id, turn_id)`.execute(db);
  await sql`CREATE TABLE store_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT`.execute(db);
  await sql`PRAGMA user_version = 1`.execute(db);
}
