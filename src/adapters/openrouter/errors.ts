/**
 * @module OpenRouter failures: `{"error":{"code":<status number>,"message","metadata"}}` (wire-formats §3).
 * 402 (credits) is not retryable; 408 is a timeout; 503 "no provider meets the requirements" is overload.
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
  const { raw } = readErrorBody(bodyText);
  const provider = (raw as { metadata?: { provider_name?: unknown } } | undefined)?.metadata?.provider_name;
  if (typeof provider === 'string' && f.message) f.message = `${f.message} (provider ${provider})`;
  if (status === 402)
    return failure('authentication', f.message || 'insufficient OpenRouter credits', {
      status,
      retryable: false,
    });
  return f;
}

export { classifyOpenAIStreamError as classifyOpenRouterStreamError } from '../openai/errors.ts';
