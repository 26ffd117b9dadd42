/**
 * @module The inbound-shape contract: what the pipeline calls for each client wire (Anthropic Messages on
 * `/v1/messages`, OpenAI Chat Completions on `/v1/chat/completions`), plus the validation helper they share.
 */
import * as v from 'valibot';
import type { CanonicalRequest } from '../../canonical/request.ts';
import type { CanonicalResponse } from '../../canonical/response.ts';
import type { CanonicalStreamEvent } from '../../canonical/stream.ts';
import type { InboundShape as ShapeName } from '../../events/catalog.ts';
import { SvcError, shouldRetryFor } from '../../lib/errors.ts';
import { issueMessage } from '../../lib/issue-message.ts';
import type { SseEvent } from '../../lib/sse-decode.ts';

/** The few fields the pipeline needs before routing, checked without a full decode (fast path). */
export interface InboundSummary {
  model: string;
  stream: boolean;
  /** OpenAI: the client asked for the usage chunk. Anthropic: always true. */
  include_usage: boolean;
}

export interface EncodeOptions {
  /** The model name the client requested; echoed as `model` (spec 1 §POST /v1/messages). */
  model: string;
  /** Unix seconds for OpenAI `created`; defaults to now. */
  created?: number;
  /** The client's request body, for shapes whose answer echoes request fields (Responses: `tools`, …). */
  request?: Record<string, unknown>;
  /**
   * Responses: the id to build the response and item ids from (the gateway's request id, unique where an
   * upstream's message ids may not be); the upstream message id when absent.
   */
  idBase?: string;
}

export interface StreamEncodeOptions extends EncodeOptions {
  /** OpenAI: emit the usage chunk (the client sent `stream_options.include_usage`). */
  include_usage?: boolean;
  /** Anthropic: the gateway's input-token estimate for `message_start` when the upstream states none there. */
  input_tokens_estimate?: number;
  /** Responses: receives the final response object (the one `response.completed` carries). */
  onResponse?: (response: Record<string, unknown>) => void;
  /**
   * Responses: whether the upstream ended the block at this canonical index (StreamProgress.blockEnded), so
   * a failure after it keeps that item among the finished ones.
   */
  blockEnded?: (index: number) => boolean;
}

/** An error as an HTTP response in a shape. */
export interface ShapeErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export interface InboundShape {
  readonly name: ShapeName;
  /** Validates the top-level types (model, messages, max_tokens…); throws SvcError('invalid_request'). */
  validate(body: unknown): InboundSummary;
  /** Client JSON → CanonicalRequest; `headers` are the inbound request headers (lowercase names). */
  decode(body: unknown, headers?: Record<string, string | undefined>): CanonicalRequest;
  encode(res: CanonicalResponse, opts: EncodeOptions): Record<string, unknown>;
  /** SSE text chunks; a failure after the first chunk becomes this shape's error frame. */
  encodeStream(
    events: AsyncIterable<CanonicalStreamEvent>,
    opts: StreamEncodeOptions,
  ): AsyncGenerator<string>;
  encodeError(err: unknown): ShapeErrorResponse;
  /** The error frame for a failure after the stream started. */
  encodeStreamError(err: unknown): string;
  /**
   * Same wire: how a stream the gateway must end itself (a reset, a timeout, an unreadable frame) ends in
   * this shape when that needs what the upstream's frames said (the Responses API's sequence numbers and
   * response object); without it, `encodeStreamError`.
   */
  createPassthroughEnd?(requestedModel: string): PassthroughEnd;
}

/** Watches the upstream's frames of a same-wire stream and writes its failed end. */
export interface PassthroughEnd {
  observe(e: SseEvent): void;
  encodeError(err: unknown): string;
  /**
   * The data of the upstream's terminal frame as it came (Responses: `response.completed` or
   * `response.incomplete`, whose `response` is kept for follow-ups), once seen.
   */
  completed(): string | undefined;
}

/** Longest accepted `model` name (issue 17: an 8 MiB name was stored four times in the trace and logged). */
export const MAX_MODEL_LENGTH = 256;

/** The requested model name, as both shapes accept it: never empty or only spaces (a 400, not the default). */
export const ModelNameSchema = v.pipe(
  v.string(),
  v.check((name) => name.trim() !== '', 'must name a model, not be empty or blank'),
  v.maxLength(MAX_MODEL_LENGTH, `must be at most ${MAX_MODEL_LENGTH} characters`),
);

/**
 * Parses `value` or throws SvcError('invalid_request') whose message names the failing field and says what it
 * must be in the product's words ('model: is required', 'max_tokens: must be a number, not "10"'), as the
 * service endpoints do, never valibot's ('Invalid key: Expected "model" but received undefined').
 */
export function parseOrThrow<S extends v.GenericSchema>(
  schema: S,
  value: unknown,
  prefix = '',
): v.InferOutput<S> {
  const r = v.safeParse(schema, value);
  if (r.success) return r.output;
  const issue = r.issues[0];
  const path = v.getDotPath(issue);
  const field = prefix && path ? `${prefix}.${path}` : prefix || path || 'body';
  throw new SvcError('invalid_request', {
    message: `${field}: ${issueMessage(issue)}`,
    details: { param: field },
  });
}

/** Throws SvcError('invalid_request') naming `field`. */
export function invalid(field: string, message: string): never {
  throw new SvcError('invalid_request', { message: `${field}: ${message}`, details: { param: field } });
}

/** Split of a parsed body into known fields and the rest (carried as passthrough). */
export function splitFields(
  body: Record<string, unknown>,
  known: ReadonlySet<string>,
): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  for (const key in body) if (!known.has(key)) rest[key] = body[key];
  return rest;
}

/** `retry-after` (seconds) of a retryable gateway answer that has no upstream hint. */
export const DEFAULT_RETRY_AFTER_S = 1;

/** Message of the error frame when the canonical stream ends without `message.complete`. */
export const TRUNCATED = 'upstream stream ended before the message completed';

/** The parts of an error body both shapes share (DECISIONS §4): extra fields and response headers. */
export interface ErrorParts {
  err: SvcError;
  status: number;
  /** `key_id`, `revoked_at` and `details` to spread inside `error`. */
  extra: Record<string, unknown>;
  headers: Record<string, string>;
}

/** Normalises any thrown value (non-SvcError → internal_error, message hidden) into ErrorParts. */
export function errorParts(value: unknown): ErrorParts {
  const err =
    value instanceof SvcError
      ? value
      : new SvcError('internal_error', { message: 'internal error', cause: value });
  const { key_id, revoked_at, retry_after_ms, should_retry, ...rest } = err.details ?? {};
  const extra: Record<string, unknown> = {};
  if (key_id !== undefined) extra.key_id = key_id;
  if (revoked_at !== undefined) extra.revoked_at = revoked_at;
  if (Object.keys(rest).length > 0) extra.details = rest;
  const headers: Record<string, string> = {};
  // SDKs obey x-should-retry before the status (wire-formats §4; DECISIONS §4 for quota_exceeded)
  // ...unless the provider said that no retry helps (its own x-should-retry: false)
  const shouldRetry = should_retry === false ? false : shouldRetryFor(err.code);
  if (shouldRetry !== undefined) headers['x-should-retry'] = String(shouldRetry);
  const wait = typeof retry_after_ms === 'number' && retry_after_ms >= 0 ? retry_after_ms : undefined;
  if (wait !== undefined) {
    headers['retry-after'] = String(Math.ceil(wait / 1000));
    headers['retry-after-ms'] = String(Math.round(wait));
  } else if (shouldRetry === true) {
    // a retryable answer always says when (issue 13); the gateway's own 429/503 know no better than this
    headers['retry-after'] = String(DEFAULT_RETRY_AFTER_S);
  }
  return { err, status: err.status, extra, headers };
}
