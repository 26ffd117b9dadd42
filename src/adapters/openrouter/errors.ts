/**
 * @module OpenRouter failures: `{"error":{"code":<status number>,"message","metadata"}}` (wire-formats §3).
 * 402 (credits) is not retryable; a 403 with moderation metadata is the client's input (a 400), not the
 * gateway's key; 408 is a timeout; 503 "no provider meets the requirements" is overload.
 */
import type { HeaderGetter } from '../adapter.ts';
import { classifyOpenAIResponse } from '../openai/errors.ts';
import { failure, readErrorBody, type UpstreamFailure } from '../upstream-error.ts';

export function classifyOpenRouterResponse(
  status: number,
  header: HeaderGetter,
  bodyText: string,
): UpstreamFailure {
  const f = classifyOpenAIResponse(status, header, bodyText);
  const { raw, message } = readErrorBody(bodyText);
  const provider = (raw as { metadata?: { provider_name?: unknown } } | undefined)?.metadata?.provider_name;
  if (typeof provider === 'string' && f.message) f.message = `${f.message} (provider ${provider})`;
  const moderation = moderationReasons(raw);
  if (status === 403 && moderation !== null) {
    // the client's input was flagged by the model's moderation: the request, not the gateway's key
    const why = moderation.length > 0 ? ` (${moderation.join(', ')})` : '';
    return failure('invalid_request', `${message || 'input flagged by moderation'}${why}`, {
      status,
      retryable: false,
      upstream_type: 'moderation',
    });
  }
  if (status === 402)
    return failure('authentication', f.message || 'insufficient OpenRouter credits', {
      status,
      retryable: false,
    });
  return f;
}

/** `metadata.reasons` of a moderation refusal (`[]` when flagged without reasons); null when it is none. */
function moderationReasons(raw: unknown): string[] | null {
  const m = (raw as { metadata?: { reasons?: unknown; flagged_input?: unknown } } | undefined)?.metadata;
  if (!m || (m.reasons === undefined && m.flagged_input === undefined)) return null;
  return Array.isArray(m.reasons) ? m.reasons.filter((r): r is string => typeof r === 'string') : [];
}

export { classifyOpenAIStreamError as classifyOpenRouterStreamError } from '../openai/errors.ts';
