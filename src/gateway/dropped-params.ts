/**
 * @module Chat Completions parameters a Claude model has no equivalent for and that change no answer's
 * shape: a translation leaves them out and says so (wire-formats §5.1 last row: "drop with a warning
 * header/log") in the `svc-dropped-params` response header and the request log line. What would change the
 * answer (log probabilities, audio output, web search) is a 400 instead (adapters/anthropic/request.ts).
 */

/** Response header listing the request parameters a translated call was sent without. */
export const DROPPED_PARAMS_HEADER = 'svc-dropped-params';

/** Sampling and serving knobs of the OpenAI API that the Messages API does not take. */
const NOT_FOR_CLAUDE = [
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'logit_bias',
  'service_tier',
  'prediction',
] as const;

/** The parameters of a Chat Completions `body` that a call to a model on `adapter` is sent without. */
export function droppedChatParams(body: Record<string, unknown>, adapter: string): string[] {
  if (adapter !== 'anthropic') return [];
  return NOT_FOR_CLAUDE.filter((name) => body[name] != null);
}
