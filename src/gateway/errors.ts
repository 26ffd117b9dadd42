/**
 * @module Which error body a gateway response gets (DECISIONS §4): on a provider-shape path that
 * provider's own shape (shapes/<s>/errors.ts), so the official SDKs surface it; elsewhere the service
 * body `{"error":{"code","message","details"?}}` of http/service-errors.ts.
 */
import type { InboundShape } from '../events/catalog.ts';
import { encodeServiceError } from '../http/service-errors.ts';
import type { SvcError } from '../lib/errors.ts';
import { encodeAnthropicError } from './shapes/anthropic/errors.ts';
import { encodeOpenAIError } from './shapes/openai/errors.ts';

export interface EncodedError {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * The response for `err` on a path of `shape` (undefined: a service-owned or unknown path); `requestId`
 * goes where the provider's own body carries one (Anthropic's top-level `request_id`).
 */
export function encodeGatewayError(
  shape: InboundShape | undefined,
  err: SvcError,
  requestId?: string,
): EncodedError {
  if (shape === 'anthropic') return encodeAnthropicError(err, requestId);
  if (shape === 'openai' || shape === 'openai_responses') return encodeOpenAIError(err);
  return { status: err.status, headers: {}, body: encodeServiceError(err) };
}
