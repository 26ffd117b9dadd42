/**
 * @module OpenAI-wire failures → UpstreamFailure: HTTP errors `{"error":{"message","type","code"}}`
 * (wire-formats §2.8; OpenRouter's numeric `code` too, §3) and in-stream `{"error":…}` chunks.
 */
import type { HeaderGetter } from '../adapter.ts';
import {
  classifyErrorType,
  classifyHttpFailure,
  classifyStatus,
  classifyTransportError,
  failure,
  readErrorBody,
  type UpstreamFailure,
} from '../upstream-error.ts';

export function classifyOpenAIResponse(
  status: number,
  header: HeaderGetter,
  bodyText: string,
): UpstreamFailure {
  const { message, raw } = readErrorBody(bodyText);
  const e = raw as { type?: unknown; code?: unknown } | undefined;
  // `code` is more specific than `type` (insufficient_quota vs rate_limit_exceeded under 429)
  const type = typeof e?.code === 'string' ? e.code : typeof e?.type === 'string' ? e.type : undefined;
  return classifyHttpFailure(status, header, message, type);
}

/** The `error` object of an in-stream chunk (OpenAI) or of OpenRouter's `finish_reason:"error"` chunk. */
export function classifyOpenAIStreamError(error: any): UpstreamFailure {
  const code = error?.code;
  const type = typeof code === 'string' ? code : typeof error?.type === 'string' ? error.type : undefined;
  const cls = typeof code === 'number' ? classifyStatus(code) : (classifyErrorType(type) ?? 'server_error');
  return failure(cls, typeof error?.message === 'string' ? error.message : 'upstream stream error', {
    upstream_type: type ?? (typeof code === 'number' ? String(code) : undefined),
  });
}

/** Classifies the provider's HTTP answer of a status (the adapter's `classifyResponse`). */
export type ClassifyResponse = (status: number, header: HeaderGetter, bodyText: string) => UpstreamFailure;

/**
 * The `error` object a 2xx answer holds in place of its content (a 200 body, or a stream's first event):
 * OpenRouter's numeric `code` is the HTTP status it stands for (wire-formats §3), so it is classified as
 * `classifyResponse` classifies the provider's HTTP answer of that status (the same class, status, code,
 * retry and headers: a 403 with moderation metadata is the client's input, a 402 is credits); any other
 * `code` by its type.
 */
export function classifyEmbeddedOpenAIError(
  classifyResponse: ClassifyResponse,
  error: any,
  header: HeaderGetter,
): UpstreamFailure {
  const status = error?.code;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599
    ? classifyResponse(status, header, JSON.stringify({ error }))
    : classifyOpenAIStreamError(error);
}

/** The error object a 200 body or chunk carries in place of its answer, if any (wire-formats §3). */
export function embeddedOpenAIError(raw: any): any {
  const error = raw?.error;
  if (error) return typeof error === 'object' ? error : { message: String(error) };
  const choice = raw?.choices?.[0];
  return choice?.finish_reason === 'error' ? choiceError(choice) : undefined;
}

/**
 * The error of a choice that finished with `finish_reason:"error"`: OpenRouter puts `{code, message}` on
 * the choice (its 429 or 502 then keeps its class and message).
 */
export function choiceError(choice: any): unknown {
  const e = choice?.error;
  return e && typeof e === 'object' ? e : { message: 'upstream finished with an error' };
}

export const classifyOpenAINetworkError = classifyTransportError;
