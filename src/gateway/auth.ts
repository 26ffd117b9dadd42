/**
 * @module Gateway-key authentication (spec 1 §Authentication, DECISIONS §4): the token comes from
 * `x-api-key` or `Authorization: Bearer`, its SHA-256 is looked up in the in-memory keystore cache, and
 * each rejection publishes `gateway.auth_failed` and throws the matching 401 SvcError.
 */
import type { Context } from 'hono';
import type { Bus } from '../events/bus.ts';
import type { AuthFailedPayload, AuthFailureReason } from '../events/catalog.ts';
import { requestHeaders } from '../http/request-headers.ts';
import { SvcError } from '../lib/errors.ts';
import type { Clock } from '../lib/time.ts';
import type { GatewayEnv } from './env.ts';
import type { KeystoreCache } from './keystore/file.ts';
import { resolveEffectiveState } from './keystore/keystore.ts';
import { hashToken, isGatewayTokenShaped } from './keystore/token.ts';

export interface AuthDeps {
  keys: KeystoreCache;
  bus: Bus;
  clock: Clock;
}

/** What a client sent as its gateway key: a token, nothing, or a header that holds no single Bearer token. */
export type SentToken = { type: 'token'; token: string } | { type: 'missing' } | { type: 'malformed' };

/**
 * The token a client sent: `x-api-key` (messages-shape SDKs) first, else `Authorization: Bearer`. An
 * Authorization that is not one Bearer token (`Basic …`, `Bearer a b`, two headers joined by a comma) is
 * malformed, which DECISIONS §4 answers as `invalid_token`; an empty one is missing. When `x-api-key`
 * holds something that is not a gateway token (`gw_…`) and the Bearer token is one, the Bearer token is
 * the gateway key: Claude Code with both ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN set sends the user's
 * own Anthropic key as `x-api-key` and the gateway key as the Bearer token.
 */
export function extractToken(headers: { get(name: string): string | null }): SentToken {
  const apiKey = headers.get('x-api-key')?.trim();
  const bearer = bearerToken(headers.get('authorization')?.trim() ?? '');
  if (apiKey) {
    if (!isGatewayTokenShaped(apiKey) && bearer.type === 'token' && isGatewayTokenShaped(bearer.token))
      return bearer;
    return { type: 'token', token: apiKey };
  }
  return bearer;
}

/**
 * Authenticates a provider-shape request (expects `shape` and `requestId` to be set): sets `gatewayKey`, or
 * publishes `gateway.auth_failed` and throws the 401. Synchronous, so a route's guard needs no async frame.
 */
export function createAuth(deps: AuthDeps): (c: Context<GatewayEnv>) => void {
  return function auth(c) {
    deps.keys.refresh(); // the file: one stat, a re-read only when it changed; the table: kept current by NOTIFY
    const sent = extractToken(requestHeaders(c));
    if (sent.type === 'missing') reject(c, deps, 'missing_token');
    if (sent.type === 'malformed') reject(c, deps, 'invalid_token');
    const secretHash = hashToken(sent.token);
    const record = deps.keys.lookup(secretHash);
    const prefix = secretHash.slice(0, 8);
    if (!record) reject(c, deps, 'invalid_token', { token_hash_prefix: prefix });
    const state = resolveEffectiveState(record, deps.clock.nowUs());
    if (state.status === 'revoked') {
      // the request log names the revoked key too (who still uses it), as the 401 body and the event do
      c.set('gatewayKey', record);
      reject(
        c,
        deps,
        'key_revoked',
        { token_hash_prefix: prefix, gateway_key_id: record.key_id },
        { key_id: record.key_id, revoked_at: state.revokedAt },
      );
    }
    c.set('gatewayKey', record);
  };
}

// --- internal ---

function bearerToken(authorization: string): SentToken {
  if (authorization === '' || /^Bearer$/i.test(authorization)) return { type: 'missing' };
  const m = /^Bearer\s+(\S+)$/i.exec(authorization);
  return m ? { type: 'token', token: m[1] } : { type: 'malformed' };
}

const MESSAGES: Record<AuthFailureReason, string> = {
  missing_token:
    'No gateway key was sent; pass it as the x-api-key header or as Authorization: Bearer <token>.',
  invalid_token: 'The gateway key is not valid; check the token or ask the operator for a key.',
  key_revoked: 'This gateway key has been revoked; ask the operator for a new key.',
};

function reject(
  c: Context<GatewayEnv>,
  deps: AuthDeps,
  reason: AuthFailureReason,
  extra: Partial<AuthFailedPayload> = {},
  details?: Record<string, unknown>,
): never {
  deps.bus.publish({
    type: 'gateway.auth_failed',
    actor: 'gateway',
    turn_id: c.get('requestId') ?? null,
    payload: { reason, inbound_shape: c.get('shape'), ...extra },
  });
  throw new SvcError(reason, { message: MESSAGES[reason], details });
}
