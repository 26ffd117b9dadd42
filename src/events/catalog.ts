/**
 * @module The closed catalog of every event type named in the three spec documents: its layer
 * (persisted bus event or transient streaming event), default sensitivity and whether it is an audit
 * event kept past trace retention. Payload types for the events whose fields the spec fixes.
 */

export const SENSITIVITY = ['public', 'pseudonymous', 'private'] as const;
export type Sensitivity = (typeof SENSITIVITY)[number];

interface CatalogEntry {
  /** Written to the trace store (bus events) or only forwarded live (streaming events). */
  readonly persisted: boolean;
  readonly sensitivity: Sensitivity;
  /** Audit events survive the 90-day trace-retention sweep (spec 1 §Limits). */
  readonly audit?: boolean;
}

const bus = (sensitivity: Sensitivity = 'pseudonymous', audit = false): CatalogEntry => ({
  persisted: true,
  sensitivity,
  audit,
});
const streaming = (sensitivity: Sensitivity = 'private'): CatalogEntry => ({ persisted: false, sensitivity });

export const EVENT_CATALOG = {
  // turns and routing (spec 1 §Events, spec 2 §Events)
  'turn.started': bus(),
  'turn.completed': bus(),
  'turn.cancelled': bus(),
  'route.decided': bus(),
  'pattern.matched': bus(),
  // model calls
  'llm.call_started': bus(),
  'llm.call_completed': bus(),
  'llm.call_failed': bus(),
  // tools
  'tool.called': bus('private'),
  'tool.completed': bus('private'),
  'tool.failed': bus('private'),
  'tool.confirmation_requested': bus('private'),
  'tool.confirmation_resolved': bus(),
  // delegation
  // the task and the worker's result are model-written text, like a tool's input and output
  'delegate.started': bus('private'),
  'delegate.completed': bus('private'),
  'delegate.failed': bus(),
  // evaluation (spec 1 §GET /metrics)
  'eval.completed': bus(),
  'eval.failed': bus(),
  // gateway keys and admission (audit)
  'gateway.key_issued': bus('pseudonymous', true),
  'gateway.key_revoked': bus('pseudonymous', true),
  'gateway.key_rotated': bus('pseudonymous', true),
  'gateway.auth_failed': bus('pseudonymous', true),
  'gateway.quota_exceeded': bus('pseudonymous', true),
  'quota.alert': bus('pseudonymous', true),
  // the bus itself
  'bus.subscriber_registered': bus('public'),
  'bus.subscriber_unregistered': bus('public'),
  'bus.handler_warning': bus('public'),
  'bus.gap_detected': bus('public'),
  // per-user data operations (spec 3, audit)
  'analytics.user_exported': bus('pseudonymous', true),
  'analytics.user_forgotten': bus('pseudonymous', true),
  // streaming-only events (spec 2 §Events): forwarded to clients, never persisted
  'message.start': streaming(),
  'text.delta': streaming(),
  'thinking.delta': streaming(),
  'tool.use_start': streaming(),
  'tool.use_input_delta': streaming(),
  'tool.use_end': streaming(),
  'message.complete': streaming(),
} as const satisfies Record<string, CatalogEntry>;

export type EventType = keyof typeof EVENT_CATALOG;
export type BusEventType = {
  [K in EventType]: (typeof EVENT_CATALOG)[K]['persisted'] extends true ? K : never;
}[EventType];
export type StreamingEventType = Exclude<EventType, BusEventType>;

/** Raised when the envelope or a payload changes incompatibly (GET /server/version, spec 2). */
export const EVENTS_SCHEMA_VERSION = 1;

export const EVENT_TYPES = Object.keys(EVENT_CATALOG) as EventType[];

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(EVENT_CATALOG, value);
}

export function isPersisted(type: EventType): boolean {
  return EVENT_CATALOG[type].persisted;
}

/** Who produced an event. */
export type Actor = 'gateway' | 'agent' | 'user' | 'tool' | 'router' | 'bus' | 'operator' | 'system';
/** Who makes model calls (llm.call_* actor): the gateway for its clients, the agent server for its turns. */
export type CallActor = Extract<Actor, 'gateway' | 'agent'>;

// --- payloads whose fields the spec fixes ---

export type ErrorClass =
  | 'rate_limit'
  | 'overloaded'
  | 'server_error'
  | 'timeout'
  | 'connection_error'
  | 'authentication'
  | 'invalid_request'
  | 'cancelled';

export type ToolErrorClass =
  | 'not_found'
  | 'permission_denied'
  | 'invalid_input'
  | 'timeout'
  | 'execution_error'
  | 'denied_by_user'
  | 'cancelled'
  | 'outside_workspace';

/**
 * The closed set of inbound shapes (DECISIONS §1 inbound_shape values, plus the Responses API of issue 13):
 * `anthropic` POST /v1/messages, `openai` POST /v1/chat/completions, `openai_responses` POST /v1/responses.
 */
export const INBOUND_SHAPES = ['anthropic', 'openai', 'openai_responses'] as const;
export type InboundShape = (typeof INBOUND_SHAPES)[number];
export type AuthFailureReason = 'missing_token' | 'invalid_token' | 'key_revoked';

/** Attribution fields shared by LLM call events (DECISIONS §3). */
export interface CallAttribution {
  requested_model: string | null;
  model: string;
  provider: string;
  gateway_key_id: string | null;
  inbound_shape: InboundShape | null;
  user_id: string | null;
  team_id: string | null;
  parent_session_id: string | null;
}

export interface LlmCallCompletedPayload extends CallAttribution {
  cost_usd: string;
  pricing_version: string;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cache_creation_input_tokens: number;
  /** The part of cache_creation_input_tokens written for one hour; only when not zero. */
  cache_creation_1h_input_tokens?: number;
  /** Server-side web searches the provider billed per use (priced at the model's web_search); only when not zero. */
  web_search_requests?: number;
  /** The paid service tier (models.yaml service_tiers) the call was billed at; absent: the standard tier. */
  service_tier?: string;
  latency_ms: number;
  ttft_ms: number | null;
  stop_reason: string | null;
  error_class: 'cancelled' | null;
  attempts: number;
  [extra: string]: unknown;
}

export interface LlmCallFailedPayload extends CallAttribution {
  error_class: ErrorClass;
  message: string;
  status: number | null;
  latency_ms: number;
  attempts: number;
  [extra: string]: unknown;
}

/** DECISIONS §4's chain entry, exactly: {policy, model, verdict, validation_failure?}. */
export interface RouteChainEntry {
  policy: string;
  model: string | null;
  verdict: 'accepted' | 'rejected' | 'no_match';
  validation_failure?: string;
}

/** The request's fingerprints on route.decided: what slot 4 learns from (README §Learned routing). */
export interface RouteFingerprint {
  /** `s1:<16 hex>`: workspace, images, tool names, input-size and message-count buckets. */
  structural: string;
  /** MinHash bands of the last user message's words, `h1:<band>:<8 hex>` (or `h1:empty`). */
  sketch: string[];
  /** Exact message count (a retry of the same request on another model has the same one). */
  messages: number;
}

export interface RouteDecidedPayload {
  chain: RouteChainEntry[];
  winner_index: number;
  chosen_model: string | null;
  elapsed_ms: number;
  /** SHA-256 of the routing policy that decided. */
  routing_policy_version?: string;
  /** The routing.yaml rule whose `when` held when slot 3 proposed a model (the chain's `rule` entry). */
  rule?: string;
  fingerprint?: RouteFingerprint;
  /** The request's estimated input tokens (routing's script-aware estimate). */
  input_tokens_estimate?: number;
  [extra: string]: unknown;
}

export interface AuthFailedPayload {
  reason: AuthFailureReason;
  inbound_shape: InboundShape;
  token_hash_prefix?: string;
  gateway_key_id?: string;
}

export interface SubscriberRegisteredPayload {
  subscriber: string;
}

export interface HandlerWarningPayload {
  subscriber: string;
  /** The event being handled; null when no event was (a WebSocket client closed for the answers to its own frames). */
  event_id: string | null;
  event_type: string | null;
  message: string;
}

/** Whose spend a cap belongs to (spec 1 §GET /metrics, svc_quota_used_ratio identity_kind). */
export type IdentityKind = 'key' | 'user' | 'team';
export type QuotaCapKind = 'daily' | 'monthly';

/** Fields of a spend cap shared by quota.alert and gateway.quota_exceeded (read by the metrics collector). */
export interface QuotaPayloadBase {
  identity_kind: IdentityKind;
  identity_id: string;
  gateway_key_id: string | null;
  user_id: string | null;
  team_id: string | null;
  cap_kind: QuotaCapKind;
  /** Decimal strings (DECISIONS §3). */
  cap_usd: string;
  spent_usd: string;
  resets_at: string;
}

/** Soft alert at 80 % of a cap; `ratio` = spent / cap as a number (svc_quota_used_ratio). */
export interface QuotaAlertPayload extends QuotaPayloadBase {
  ratio: number;
  threshold: number;
  window_start: string;
  [extra: string]: unknown;
}

/** A refused request; the collector pins svc_quota_used_ratio to 1.0 for the identity. */
export interface QuotaExceededPayload extends QuotaPayloadBase {
  reserved_usd?: string;
  requested_usd?: string;
  [extra: string]: unknown;
}

/** A tool run begins; `tool_use_id` correlates tool.completed / tool.failed (tool-name cache of 1000). */
export interface ToolCalledPayload {
  tool_use_id: string;
  tool_name: string;
  [extra: string]: unknown;
}

export interface ToolCompletedPayload {
  tool_use_id: string;
  latency_ms: number;
  [extra: string]: unknown;
}

export interface ToolFailedPayload {
  tool_use_id: string;
  latency_ms: number;
  error_class: ToolErrorClass;
  [extra: string]: unknown;
}

/** Slot 4 (pattern) won the routing chain; the learned evidence behind the choice. */
export interface PatternMatchedPayload {
  chose_model: string;
  fingerprint_version: 'structural' | 'hybrid';
  /** The table key that matched: the structural fingerprint, or it joined to one sketch band. */
  fingerprint: string;
  /** Routed requests of this fingerprint on chose_model within the lookback, and the share that succeeded. */
  samples: number;
  success_rate: number;
  /** Median cost of its successful requests, a decimal string. */
  median_cost_usd: string;
  [extra: string]: unknown;
}

export interface EvalCompletedPayload {
  judge_kind: 'heuristic' | 'llm' | 'hybrid';
  subject_kind: 'turn' | 'tool_cycle' | 'session' | 'workload';
  [extra: string]: unknown;
}

/** Window bounds as ISO 8601 UTC; null where the window is open (spec 3 §Resources). */
export interface WindowBounds {
  start: string | null;
  end: string | null;
}

/** One finished export (spec 3 §export): the realised row and byte counts, after the last row. */
export interface UserExportedPayload {
  user_id: string;
  row_count: number;
  byte_count: number;
  window: WindowBounds;
  [extra: string]: unknown;
}

/**
 * One forget call, repeats included (spec 3 §forget). The subject is recorded only by its pseudonym
 * (`user_id` = `pseudonym`): an audit row naming the original id would undo the forget.
 */
export interface UserForgottenPayload {
  user_id: string;
  pseudonym: string;
  pseudonymized_rows: number;
  completed_at: string;
  [extra: string]: unknown;
}

/** Payload types by event; events not listed carry an open object. */
/**
 * Work a process opened and never closed because it ended first (kill -9, crash, power loss), named once
 * at the next start (spec 2 §Startup 5). One event per turn; its parent is the unclosed llm.call_started.
 */
export interface GapDetectedPayload {
  reason: 'process_ended';
  turn_id: string;
  /** The turn's llm.call_started events with no llm.call_completed / llm.call_failed. */
  llm_call_started_ids: string[];
  /** Time of the turn's first event. */
  first_event_at: string;
}

/** Events that end a turn: no longer in flight once one exists (spec 3 turn drill-down, plus gaps). */
export const TURN_TERMINATORS = ['turn.completed', 'turn.cancelled', 'bus.gap_detected'] as const;

/** Events that close an llm.call_started (the gap names the ones nothing closed). */
export const LLM_CALL_TERMINATORS = ['llm.call_completed', 'llm.call_failed'] as const;

export interface KnownPayloads {
  'llm.call_completed': LlmCallCompletedPayload;
  'llm.call_failed': LlmCallFailedPayload;
  'route.decided': RouteDecidedPayload;
  'gateway.auth_failed': AuthFailedPayload;
  'gateway.quota_exceeded': QuotaExceededPayload;
  'quota.alert': QuotaAlertPayload;
  'tool.called': ToolCalledPayload;
  'tool.completed': ToolCompletedPayload;
  'tool.failed': ToolFailedPayload;
  'pattern.matched': PatternMatchedPayload;
  'eval.completed': EvalCompletedPayload;
  'bus.subscriber_registered': SubscriberRegisteredPayload;
  'bus.handler_warning': HandlerWarningPayload;
  'bus.gap_detected': GapDetectedPayload;
  'analytics.user_exported': UserExportedPayload;
  'analytics.user_forgotten': UserForgottenPayload;
}

export type PayloadOf<T extends EventType> = T extends keyof KnownPayloads
  ? KnownPayloads[T]
  : Record<string, unknown>;
