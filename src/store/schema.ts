/**
 * @module The trace store's Database interface for Kysely: it mirrors the SQL of the migrations
 * exactly (snake_case, no CamelCasePlugin). Generated columns are read-only (`GeneratedAlways`).
 */
import type { ColumnType, GeneratedAlways, Insertable, Selectable } from 'kysely';

export interface EventsTable {
  id: string;
  timestamp: string;
  timestamp_us: number;
  session_id: string | null;
  turn_id: string | null;
  type: string;
  actor: string;
  payload: string;
  parent_event_id: string | null;
  sensitivity: string;
  // generated from payload (migration 0001): operator alias and analytics read paths
  payload_json: GeneratedAlways<string>;
  model: GeneratedAlways<string | null>;
  provider: GeneratedAlways<string | null>;
  gateway_key_id: GeneratedAlways<string | null>;
  user_id: GeneratedAlways<string | null>;
  team_id: GeneratedAlways<string | null>;
  cost_usd: GeneratedAlways<string | null>;
}

export interface SessionsTable {
  id: string;
  workspace_path: string;
  active_model: string;
  created_at: string;
  updated_at: string;
  routing_policy_version: string;
  turn_count: ColumnType<number, number | undefined, number>;
  cost_so_far_usd: ColumnType<string, string | undefined, string>;
  current_turn_id: string | null;
  current_turn_status: string | null;
  is_worker: ColumnType<number, number | undefined, number>;
  parent_session_id: string | null;
  ended_at: string | null;
  disposition: string | null;
  /** 1 when active_model is the user's pinned choice (routing slot 2); migration 0003. */
  sticky: ColumnType<number, number | undefined, number>;
  /** 1 while a PATCH waits for the running turn to end; queued_model is its model (null: routed). 0007. */
  queued_swap: ColumnType<number, number | undefined, number>;
  queued_model: ColumnType<string | null, string | null | undefined, string | null>;
  /** The workspace's real path when the session was created, its tools' root; null on older rows. 0008. */
  workspace_root: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface MessagesTable {
  id: string;
  session_id: string;
  turn_id: string | null;
  role: string;
  content: string;
  metadata: ColumnType<string, string | undefined, string>;
  status: ColumnType<string, string | undefined, string>;
  created_at: string;
}

export interface ToolCallsTable {
  id: string;
  session_id: string;
  turn_id: string;
  message_id: string | null;
  tool_use_id: string;
  tool_name: string;
  input: string;
  output: string | null;
  status: string;
  error_class: string | null;
  started_at: string;
  completed_at: string | null;
  /** 1 when the tool's output was cut (tool.completed `truncated`); null before migration 0007. */
  truncated: ColumnType<number | null, number | null | undefined, number | null>;
}

/** Small key/value table for store-level facts (e.g. the forget salt, which travels with backups). */
export interface StoreMetaTable {
  key: string;
  value: string;
}

/**
 * Gateway keys on PostgreSQL (migration postgres/0002); a SQLite deployment keeps them in keys.json.
 * allowed_models and extra are JSON text.
 */
export interface GatewayKeysTable {
  key_id: string;
  secret_hash: string;
  name: string;
  workspace_path: string;
  allowed_models: string | null;
  daily_cap_usd: string | null;
  monthly_cap_usd: string | null;
  user_id: string | null;
  team_id: string | null;
  status: string;
  revoked_at: string | null;
  grace_period_until: string | null;
  created_at: string;
  extra: ColumnType<string, string | undefined, string>;
  version: ColumnType<number, never, number>;
}

/** Spend of one key in one UTC window, shared by replicas (migration postgres/0003). numeric as text. */
export interface BudgetWindowsTable {
  key_id: string;
  cap_kind: string;
  window_start_us: number;
  spent_usd: string;
  alerted: ColumnType<number, number | undefined, number>;
}

/** An admitted request's reservation until it is settled or released (migration postgres/0003). */
export interface BudgetHoldsTable {
  id: string;
  key_id: string;
  amount_usd: string;
  expires_us: number;
  origin: ColumnType<string | null, never, never>;
}

export interface Database {
  events: EventsTable;
  sessions: SessionsTable;
  messages: MessagesTable;
  tool_calls: ToolCallsTable;
  store_meta: StoreMetaTable;
  /** PostgreSQL only. */
  gateway_keys: GatewayKeysTable;
  /** PostgreSQL only. */
  budget_windows: BudgetWindowsTable;
  /** PostgreSQL only. */
  budget_holds: BudgetHoldsTable;
}

export type EventRow = Selectable<EventsTable>;
export type NewEventRow = Insertable<EventsTable>;
export type SessionRow = Selectable<SessionsTable>;
export type MessageRow = Selectable<MessagesTable>;
export type ToolCallRow = Selectable<ToolCallsTable>;
export type GatewayKeyRow = Selectable<GatewayKeysTable>;
