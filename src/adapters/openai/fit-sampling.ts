/**
 * @module Same wire to OpenAI's own reasoning models (o-series, gpt-5 and later; not gpt-oss), which refuse a
 * temperature or top_p other than the default 1 with a 400. A client that names such a model by a gateway
 * name (the canonical id `openai:gpt-5-mini`, an alias, a fallback) cannot tell it is one, so it sends what
 * it sends any chat model: the Vercel AI SDK leaves sampling out only for the names it knows (`gpt-5-mini`),
 * so its `openai('openai:gpt-5-mini')` with `temperature` failed here where it works against OpenAI. Such
 * sampling is left out of the forwarded body and named in `svc-dropped-params`, as a translated call does;
 * a body for the model named as OpenAI names it goes as sent.
 */
import { removeJsonMember } from '../../lib/json-splice.ts';
import type { AdapterName } from '../names.ts';
import { namedByGatewayName } from './gateway-name.ts';
import { takesDefaultSamplingOnly } from './model-facts.ts';

const SAMPLING = ['temperature', 'top_p'] as const;

/** The sampling fields of a same-wire `body` left out for `upstreamModel`, asked for as `requestedModel`. */
export function samplingLeftOutForGatewayName(
  adapter: AdapterName,
  requestedModel: string,
  upstreamModel: string,
  body: Record<string, unknown>,
): string[] {
  if (!namedByGatewayName(adapter, requestedModel, upstreamModel) || !takesDefaultSamplingOnly(upstreamModel))
    return [];
  return SAMPLING.filter((name) => typeof body[name] === 'number' && body[name] !== 1);
}

/** `bodyText` (a JSON object) without the top-level members `names`. */
export function withoutMembers(bodyText: string, names: readonly string[]): string {
  return names.reduce(removeJsonMember, bodyText);
}
