/**
 * @module The upstream request for a gateway call's routed model: the adapter's wire that matches the
 * client's shape (its bytes pass through), the output a translated request may ask of the model, and the
 * translated request, refused with a 400 naming a Responses part only OpenAI can serve.
 */
import type { Adapter, SameWireOps, UpstreamCall } from '../adapters/adapter.ts';
import type { CanonicalRequest } from '../canonical/request.ts';
import type { InboundShape as ShapeName } from '../events/catalog.ts';
import { SvcError } from '../lib/errors.ts';
import type { ModelEntry } from '../models/model-schema.ts';
import { findOpenAIOnlyPart } from './shapes/responses/openai-only.ts';
import { withoutToolLists } from './shapes/responses/replayed-tool-lists.ts';

/** The adapter's wire that matches the client's shape (its bytes pass through), if it has one. */
export function sameWireOps(adapter: Adapter, shape: ShapeName): SameWireOps | undefined {
  if (adapter.wire === shape) return adapter;
  return shape === 'openai_responses' ? adapter.responses : undefined;
}

/**
 * A translated request asks for no more output than the routed model can give (Claude Code asks 32,000 of
 * every model; gpt-4o refuses more than 16,384): what it could never get is not asked for. A Claude model,
 * which needs a max_tokens, gets its whole output limit when the client named none (an OpenAI client's
 * "no limit"; wire-formats §5.1, §6 #22), as an OpenAI model gives by default.
 */
export function withinOutputLimit(req: CanonicalRequest, model: ModelEntry): CanonicalRequest {
  const limit = model.capabilities.max_output_tokens;
  if (req.max_tokens === undefined)
    return model.adapter === 'anthropic' ? { ...req, max_tokens: limit } : req;
  return req.max_tokens > limit ? { ...req, max_tokens: limit } : req;
}

/**
 * The upstream request for a model on another wire. A Responses request with a part only OpenAI can serve
 * (stored state, Codex's additional_tools giving its tools, hosted tools) is refused with a 400 that names the
 * part and says what works, never answered without it (issue 13); a tool list replayed beside the request's own
 * tools is left out.
 */
export function encodeTranslated(
  adapter: Adapter,
  req: CanonicalRequest,
  upstreamModel: string,
  shape: ShapeName,
  body: unknown,
  modelId: string,
): UpstreamCall {
  const part =
    shape === 'openai_responses' ? findOpenAIOnlyPart(body as Record<string, unknown>, adapter.name) : null;
  if (part)
    throw new SvcError('invalid_request', {
      message: `${part.param}: ${part.what} can be served only by ${part.by ?? 'an OpenAI model'}, and ${modelId} is not one; ${part.instead}`,
      details: { param: part.param },
    });
  return adapter.encodeRequest(shape === 'openai_responses' ? withoutToolLists(req) : req, upstreamModel);
}
