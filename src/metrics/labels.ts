/**
 * @module Label values for the collector: every label comes from a closed set or a bounded shape,
 * and anything else collapses to `unknown` (spec 1 §GET /metrics "Label rules").
 */
import type { AuthFailureReason, ErrorClass, IdentityKind, ToolErrorClass } from '../events/catalog.ts';

export const UNKNOWN = 'unknown';
/** Label value of a missing gateway_key_id (agent-loop traffic, pre-multi-user keys). */
export const NULL_KEY = 'null';

/** Adapters of DECISIONS §1; provider is a closed set, declared once in adapters/names.ts. */
import { PROVIDERS } from '../adapters/names.ts';

export { PROVIDERS };

export const LLM_ERROR_CLASSES = [
  'rate_limit',
  'overloaded',
  'server_error',
  'timeout',
  'connection_error',
  'authentication',
  'invalid_request',
  'cancelled',
] as const satisfies readonly ErrorClass[];

export const TOOL_ERROR_CLASSES = [
  'not_found',
  'permission_denied',
  'invalid_input',
  'timeout',
  'execution_error',
  'denied_by_user',
  'cancelled',
  'outside_workspace',
] as const satisfies readonly ToolErrorClass[];

/** The seven routing policies in chain order (spec 1 §Model identifiers), declared once in routing/facts.ts. */
export { POLICY_NAMES as ROUTING_SLOTS } from '../routing/facts.ts';
/** Slot 4's fingerprint kinds (spec 1: `structural`, `hybrid`), declared once in routing/pattern/fingerprint.ts. */
export { FINGERPRINT_VERSIONS } from '../routing/pattern/fingerprint.ts';

export const AUTH_FAILURE_REASONS = [
  'missing_token',
  'invalid_token',
  'key_revoked',
] as const satisfies readonly AuthFailureReason[];
export const IDENTITY_KINDS = ['key', 'user', 'team'] as const satisfies readonly IdentityKind[];
export const JUDGE_KINDS = ['heuristic', 'llm', 'hybrid'] as const;
export const SUBJECT_KINDS = ['turn', 'tool_cycle', 'session', 'workload'] as const;

/** `value` when it is one of `allowed`, else `unknown`. */
export function oneOf(allowed: readonly string[], value: unknown): string {
  return typeof value === 'string' && allowed.includes(value) ? value : UNKNOWN;
}

/**
 * A routed model: a canonical `<adapter>:<model_name>` id of a known adapter (DECISIONS §1). Routed
 * models come from the model registry, so the set is bounded by configuration; free text is not.
 */
export function modelLabel(value: unknown): string {
  if (typeof value !== 'string') return UNKNOWN;
  if (acceptedModels.has(value)) return value;
  if (value.length > MAX_FREE_LABEL) return UNKNOWN;
  const colon = value.indexOf(':');
  if (colon < 0 || colon === value.length - 1) return UNKNOWN;
  if (!(PROVIDERS as readonly string[]).includes(value.slice(0, colon)) || !PRINTABLE.test(value))
    return UNKNOWN;
  if (acceptedModels.size < MAX_ACCEPTED_MODELS) acceptedModels.add(value);
  return value;
}

/** Tool names are identifiers (built-in tools, delegate, MCP-style `server.tool`). */
export function toolNameLabel(value: unknown): string {
  return typeof value === 'string' && TOOL_NAME.test(value) ? value : UNKNOWN;
}

/** One of the two deliberately unbounded labels (spec 1); still printable and length-capped. */
export function identityLabel(value: unknown): string {
  return typeof value === 'string' &&
    value.length > 0 &&
    value.length <= MAX_FREE_LABEL &&
    PRINTABLE.test(value)
    ? value
    : UNKNOWN;
}

/** gateway_key_id: missing or null is the literal `null`; a malformed value is `unknown`. */
export function gatewayKeyLabel(value: unknown): string {
  if (value === null || value === undefined || value === '') return NULL_KEY;
  return identityLabel(value);
}

// --- internal ---

const MAX_FREE_LABEL = 200;
/**
 * Model ids modelLabel accepted, each then taken without its checks (two a gateway call). They are the
 * registry's, so few; past this many (a registry of thousands) the rest are checked every time.
 */
const MAX_ACCEPTED_MODELS = 1024;
const acceptedModels = new Set<string>();
const PRINTABLE = /^[\x21-\x7e]+$/;
const TOOL_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;
