/**
 * @module The first event of an OpenAI-wire 200 stream (llm/call.ts peeks at it before the gateway sends its
 * own 200): an error there failed the call before its first byte, so it is retried and answered like an HTTP
 * error, and the usage it states (the prompt a failed generation read) is billed as a failed 200 body's is.
 */
import type { SseEvent } from '../../lib/sse-decode.ts';
import type { EmbeddedError, HeaderGetter } from '../adapter.ts';
import { type ClassifyResponse, classifyOpenAIStreamError } from './errors.ts';
import { embeddedOpenAIFailure } from './response.ts';
import { failedResponse } from './responses.ts';

/**
 * An error as the first event of a 200 stream: a chat chunk `{"error":…}` or one that finished with
 * "error" (OpenAI, OpenRouter; a numeric `code` classed as that HTTP answer, classifyEmbeddedOpenAIError)
 * with the `usage` it carries, or on the Responses wire an `error` event (which states no usage itself:
 * that of the `response.failed` right after it, `next`, if it came) or `response.failed` with its
 * response's `usage`.
 */
export function classifyOpenAIStreamStart(
  classifyResponse: ClassifyResponse,
): (first: SseEvent, header: HeaderGetter, next?: SseEvent | null) => EmbeddedError | null {
  return (first, header, next) => {
    // Responses events are named (and response.created carries "error":null, so it is not even parsed);
    // chat chunks are not, and only one holding an "error" member or value is read
    if (
      first.event !== undefined
        ? first.event !== 'error' && first.event !== 'response.failed'
        : !first.data.includes('"error"')
    )
      return null;
    let data: any;
    try {
      data = JSON.parse(first.data);
    } catch {
      return null; // the stream decoder reports a malformed frame in its place
    }
    if (data?.type === 'response.failed') return failedResponse(data.response);
    if (first.event === 'error' || data?.type === 'error') {
      const failure = classifyOpenAIStreamError(data?.error ?? data);
      const usage = next?.event === 'response.failed' ? failedUsage(next) : undefined;
      return usage ? { failure, usage } : { failure };
    }
    return embeddedOpenAIFailure(classifyResponse, data, header);
  };
}

/**
 * The Responses API fails a stream with `error`, then `response.failed` (its response's `usage` the prompt
 * it read): the look at a stream's start reads the event after an `error` too.
 */
export function openAIStreamStartFollows(first: SseEvent): boolean {
  return first.event === 'error';
}

/**
 * The Responses API's lifecycle events before any output: an overload or rate limit arrives after them, as
 * `error` then `response.failed` (sequence 2), still before anything was generated.
 */
export function isOpenAIStreamPreamble(e: SseEvent): boolean {
  return (
    e.event === 'response.created' || e.event === 'response.in_progress' || e.event === 'response.queued'
  );
}

// --- internal ---

/** The usage a `response.failed` event's response states, if any (a frame that is not JSON states none). */
function failedUsage(e: SseEvent): EmbeddedError['usage'] {
  try {
    return failedResponse(JSON.parse(e.data)?.response).usage;
  } catch {
    return undefined;
  }
}
