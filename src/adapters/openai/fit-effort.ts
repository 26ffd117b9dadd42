/**
 * @module Same wire to an OpenAI reasoning model: a body written for another model than the one that serves it
 * asks for an effort the routed model may refuse. Codex asks its default model (`gpt-6.1-sol`, which a
 * native-name rule sends to gpt-5) for the effort the user set (`model_reasoning_effort`, `/reasoning`):
 * `none` and `xhigh`, which that model takes, are a 400 on gpt-5 (minimal to high). The effort becomes the
 * nearest one the routed model takes (model-facts fitEffort), as a translated request's does; a body for the
 * model named as OpenAI names it goes as sent, so the provider's own 400 says what it refuses. A model that does
 * not reason (gpt-4.1, gpt-4o: Codex pointed at `openai:gpt-4.1` with an effort set) refuses any effort: the
 * reasoning options are left out and named in `svc-dropped-params`, as a translated request's are. A reasoning
 * summary the routed model does not write (concise on gpt-5) is asked as the one it writes, and a
 * `reasoning.context` (Codex's all_turns) the routed model does not take (before GPT-5.6) is left out and named.
 */
import { REASONING_EFFORTS, type ReasoningEffort } from '../../canonical/request.ts';
import { replaceJsonValue } from '../../lib/json-splice.ts';
import type { AdapterName } from '../names.ts';
import { namedByGatewayName } from './gateway-name.ts';
import { fitEffort, fitSummary, refusesReasoning, takesReasoningContext } from './model-facts.ts';

/** Where each same-wire body asks for an effort: Responses `reasoning.effort`, Chat `reasoning_effort`. */
export const EFFORT_PATHS = {
  responses: ['reasoning', 'effort'],
  chat: ['reasoning_effort'],
} as const;

/**
 * `bodyText` with the effort at `path` fitted to `adapter`'s `upstreamModel` when `body` (the parsed text) names
 * it by a gateway name; `bodyText` itself when it names that model as OpenAI does, or asks an effort the model
 * takes.
 */
export function withEffortFitted(
  adapter: AdapterName,
  bodyText: string,
  body: Record<string, unknown>,
  upstreamModel: string,
  path: readonly string[],
): string {
  if (!namedByGatewayName(adapter, body.model, upstreamModel)) return bodyText;
  const asked = valueAt(body, path);
  if (!isEffort(asked)) return bodyText;
  const fitted = fitEffort(upstreamModel, asked);
  return fitted === asked ? bodyText : (replaceJsonValue(bodyText, path, JSON.stringify(fitted)) ?? bodyText);
}

/**
 * `bodyText` with a Responses `reasoning.summary` the routed model does not write (Codex's
 * `model_reasoning_summary = "concise"`, written for its default model, on gpt-5) asked as the one it writes
 * (model-facts fitSummary), when `body` names the model by a gateway name; `bodyText` itself otherwise.
 */
export function withSummaryFitted(
  adapter: AdapterName,
  bodyText: string,
  body: Record<string, unknown>,
  upstreamModel: string,
): string {
  if (!namedByGatewayName(adapter, body.model, upstreamModel)) return bodyText;
  const asked = valueAt(body, SUMMARY_PATH);
  if (typeof asked !== 'string') return bodyText;
  const fitted = fitSummary(upstreamModel, asked);
  return fitted === asked
    ? bodyText
    : (replaceJsonValue(bodyText, SUMMARY_PATH, JSON.stringify(fitted)) ?? bodyText);
}

const SUMMARY_PATH = ['reasoning', 'summary'] as const;

/**
 * Whether a Responses `body` naming the routed OpenAI model by a gateway name asks for a `reasoning.context`
 * that model does not take (Codex's all_turns, written for its default model, on gpt-5): it is then left out
 * (withoutReasoningContext) and named `reasoning.context` in `svc-dropped-params`. A model that refuses
 * reasoning altogether loses the whole `reasoning` (reasoningLeftOutForGatewayName) instead.
 */
export function leavesOutReasoningContext(
  adapter: AdapterName,
  requestedModel: unknown,
  upstreamModel: string,
  body: Record<string, unknown>,
): boolean {
  return (
    namedByGatewayName(adapter, requestedModel, upstreamModel) &&
    valueAt(body, CONTEXT_PATH) != null &&
    !takesReasoningContext(upstreamModel) &&
    !refusesReasoning(upstreamModel)
  );
}

/** `bodyText` without its `reasoning.context` when leavesOutReasoningContext says so; `bodyText` otherwise. */
export function withoutReasoningContext(
  adapter: AdapterName,
  bodyText: string,
  body: Record<string, unknown>,
  upstreamModel: string,
): string {
  if (!leavesOutReasoningContext(adapter, body.model, upstreamModel, body)) return bodyText;
  const { context: _, ...rest } = body.reasoning as Record<string, unknown>;
  return replaceJsonValue(bodyText, ['reasoning'], JSON.stringify(rest)) ?? bodyText;
}

const CONTEXT_PATH = ['reasoning', 'context'] as const;

/**
 * The top-level reasoning options of a same-wire `body` (Chat `reasoning_effort`, the Responses `reasoning`
 * object) left out for an OpenAI model that does not reason, asked for as `requestedModel` otherwise than
 * OpenAI names it; none for a request naming the model itself (OpenAI's own 400 then).
 */
export function reasoningLeftOutForGatewayName(
  adapter: AdapterName,
  requestedModel: string,
  upstreamModel: string,
  body: Record<string, unknown>,
): string[] {
  if (!namedByGatewayName(adapter, requestedModel, upstreamModel) || !refusesReasoning(upstreamModel))
    return [];
  return REASONING_OPTIONS.filter((name) => body[name] != null);
}

const REASONING_OPTIONS = ['reasoning_effort', 'reasoning'] as const;

function valueAt(body: Record<string, unknown>, path: readonly string[]): unknown {
  let at: unknown = body;
  for (const key of path) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

function isEffort(value: unknown): value is ReasoningEffort {
  return typeof value === 'string' && (REASONING_EFFORTS as readonly string[]).includes(value);
}
