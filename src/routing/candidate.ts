/**
 * @module Candidate validation (DECISIONS §4): a proposed model is usable only when configured,
 * allowed for the key, its adapter has a provider key, and it has the capabilities (images, tools; for a
 * worker turn, can_delegate) and the context the request needs (the long-context window when the
 * request's anthropic-beta opens it). Checks run in that order; the first failure is the verdict.
 */
import { contextWindowOf } from '../models/long-context.ts';
import type { Capabilities, ModelEntry } from '../models/model-schema.ts';
import { splitCanonicalId } from '../models/registry.ts';
import type { RouteContext, RouteFacts, ValidationFailure } from './facts.ts';

export interface CandidateVerdict {
  entry: ModelEntry | undefined;
  failure: ValidationFailure | null;
}

export function validateCandidate(modelId: string, facts: RouteFacts, ctx: RouteContext): CandidateVerdict {
  const entry = ctx.registry.get(modelId);
  if (!entry) return { entry, failure: 'model_not_configured' };
  // allowed_models comes before availability so a disallowed model always reads as a 403 cause
  if (ctx.allowedModels && !ctx.allowedModels.has(entry.id)) return { entry, failure: 'model_not_allowed' };
  if (!ctx.availableAdapters.has(entry.adapter)) return { entry, failure: 'provider_unavailable' };
  if (missingCapabilities(entry, facts).length > 0) return { entry, failure: 'missing_capability' };
  const { need, window } = contextNeed(entry, facts);
  if (need > window) return { entry, failure: 'context_too_small' };
  return { entry, failure: null };
}

/** What `entry` lacks for this request (a missing_capability verdict): `images`, `tools`, `can_delegate`. */
export function missingCapabilities(entry: ModelEntry, facts: RouteFacts): string[] {
  const caps = entry.capabilities;
  const lacks: string[] = [];
  if (facts.hasImages && !caps.supports_images) lacks.push('images');
  if (facts.hasTools && !caps.supports_tools) lacks.push('tools');
  // a worker turn (a planner delegated it) runs only on a model that takes delegated work, whatever proposed it
  if ((facts.workerTurn || facts.delegateModel) && !entry.can_delegate) lacks.push('can_delegate');
  return lacks;
}

/**
 * What the context check weighs on `entry`: the estimated input (an agent turn's smallest window) plus the
 * output asked for (see fitsContext), against the window the request gets there.
 */
export function contextNeed(entry: ModelEntry, facts: RouteFacts): { need: number; window: number } {
  const input = facts.smallestInputTokens ?? facts.estimatedInputTokens;
  const caps = entry.capabilities;
  const need = input + Math.min(facts.maxOutputTokens ?? 0, caps.max_output_tokens);
  return { need, window: contextWindowOf(entry, facts.anthropicBetas) };
}

/**
 * The context check: estimated input plus the output asked for (max_tokens) within the context window
 * (`window`: max_context_tokens, or the long-context window the request's beta opens). The
 * output counts up to the model's max_output_tokens, all a translated call asks of it (a same-wire call
 * asking for more gets the provider's own refusal): a max_tokens above that never rejects the model the
 * client named in favour of another.
 */
export function fitsContext(
  inputTokens: number,
  maxOutputTokens: number | null,
  caps: Capabilities,
  window: number = caps.max_context_tokens,
): boolean {
  return inputTokens + Math.min(maxOutputTokens ?? 0, caps.max_output_tokens) <= window;
}

/**
 * Model reference from an explicit choice (sticky, delegate): a canonical id or alias resolves;
 * anything else is returned as given so the chain shows it rejected as model_not_configured.
 */
export function resolveExplicitRef(ref: string, ctx: RouteContext): string {
  return ctx.policy.resolveRef(ref) ?? ref;
}

/**
 * Slot 1 (spec 1 §Model identifiers): canonical ids and aliases match, lower-cased when the name
 * as written names nothing (`Haiku`, `Anthropic:claude-haiku-4-5`: the native-name rules ignore case too, and
 * the global default must not silently serve a model the client named); an id with a known adapter prefix
 * but no registry entry is proposed (and rejected as model_not_configured); a bare provider model name,
 * or a prefix that is no adapter (`ft:gpt-4o:…`), does not match.
 */
export function resolveRequestedRef(ref: string, ctx: RouteContext): string | null {
  const id = ctx.policy.resolveRef(ref) ?? lowerCased(ref, ctx);
  if (id !== undefined) return id;
  return splitCanonicalId(ref) ? ref : null;
}

/** `ref` looked up lower-cased, when that is another name (a bare native name, on every such request, is not). */
function lowerCased(ref: string, ctx: RouteContext): string | undefined {
  const lower = ref.toLowerCase();
  return lower === ref ? undefined : ctx.policy.resolveRef(lower);
}
