/**
 * @module Whether a same-wire request named the OpenAI model that serves it as OpenAI names it, or by a gateway
 * name (the canonical id `openai:gpt-5-mini`, an alias, a fallback, another model a native-name rule sends
 * there). A client that names the model as OpenAI does knows what it asks of it: its body goes as written, and
 * the provider's own 400 says what it refuses. A gateway name hides the model from the client, which writes
 * what it writes any model: such a body is fitted to the model that serves it (fit-sampling.ts,
 * fit-effort.ts). OpenRouter's models get every body as written.
 */
import type { AdapterName } from '../names.ts';

/** Whether a body asking for `requestedModel` on `adapter`'s `upstreamModel` is fitted to it (a gateway name). */
export function namedByGatewayName(
  adapter: AdapterName,
  requestedModel: unknown,
  upstreamModel: string,
): boolean {
  return adapter === 'openai' && requestedModel !== upstreamModel;
}
