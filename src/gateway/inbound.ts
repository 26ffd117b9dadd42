/**
 * @module What every provider-shape handler reads first: the body within the size cap, parsed as JSON and
 * checked for depth before anything recursive runs; the Anthropic headers worth forwarding; and the key's
 * allowed_models as a set (built once per key record).
 */
import type { Context } from 'hono';
import { assertNoContentCoding } from '../http/content-coding.ts';
import { clientGoneSignal, readBodyText } from '../http/incoming.ts';
import { requestHeaders } from '../http/request-headers.ts';
import { SvcError } from '../lib/errors.ts';
import { assertJsonDepth, MAX_JSON_DEPTH } from '../lib/json-depth.ts';
import type { GatewayEnv } from './env.ts';
import type { KeyRecord } from './keystore/keystore.ts';
import { pickAnthropicHeaders } from './shapes/anthropic/version.ts';

export interface InboundBody {
  /** The bytes as received (the same-wire path forwards them). */
  bodyText: string;
  /** Always a JSON object: an array, a string or null is refused here, naming the body (not a field). */
  body: Record<string, unknown>;
}

/**
 * The request body within `maxBodyBytes` (413 past it), as a JSON object (400 otherwise), depth-checked. An
 * array body was read by the shape schemas as an object without fields, so `[1]` was refused for a missing
 * `model` rather than for not being an object. A body sent with a content coding (gzip, br…) is 415 before
 * it is read: the gateway takes bodies uncompressed only (RFC 9110 §15.5.16), and reading gzip bytes as
 * text refused them as "not valid JSON", which sent the client after its JSON.
 */
export async function readInboundBody(c: Context<GatewayEnv>, maxBodyBytes: number): Promise<InboundBody> {
  assertNoContentCoding(requestHeaders(c).get('content-encoding'));
  const bodyText = await readBodyText(c.req.raw, maxBodyBytes, c.env);
  const body = parseJsonBody(bodyText);
  assertJsonDepth(body, MAX_JSON_DEPTH, bodyText); // before anything recursive (decode, translation, routing facts) runs
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new SvcError('invalid_request', {
      message: 'body: must be a JSON object',
      details: { param: 'body' },
    });
  return { bodyText, body: body as Record<string, unknown> };
}

/** Aborts when the client disconnects. */
export function inboundSignal(c: Context<GatewayEnv>): AbortSignal {
  return clientGoneSignal(c.req.raw, c.env);
}

/** `anthropic-version` (resolved) and `anthropic-beta` of the inbound request, for an Anthropic upstream. */
export function inboundAnthropicHeaders(c: Context<GatewayEnv>): Record<string, string | undefined> {
  const h = requestHeaders(c);
  return pickAnthropicHeaders({
    'anthropic-version': h.get('anthropic-version') ?? undefined,
    'anthropic-beta': h.get('anthropic-beta') ?? undefined,
  });
}

/** A key's allowed_models as a set, or null when it may use every model; cached per key record. */
export function createAllowedModels(): (key: KeyRecord) => ReadonlySet<string> | null {
  const sets = new WeakMap<KeyRecord, ReadonlySet<string> | null>();
  return (key) => {
    let set = sets.get(key);
    if (set === undefined) {
      set = key.allowed_models?.length ? new Set(key.allowed_models) : null;
      sets.set(key, set);
    }
    return set;
  };
}

// --- internal ---

function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new SvcError('invalid_request', {
      message: 'body: the request body is not valid JSON',
      details: { param: 'body' },
    });
  }
}
