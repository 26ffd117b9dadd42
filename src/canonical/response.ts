/**
 * @module CanonicalResponse and usage. `input_tokens` is uncached input only (DECISIONS §3); the three
 * input classes are kept apart because they are priced apart (wire-formats §5.2).
 */
import type { ContentBlock } from './message.ts';

export const STOP_REASONS = [
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'refusal',
  'pause_turn',
  'model_context_window_exceeded',
  'cancelled',
] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/**
 * The stop reason of a message: one that carries tool calls but says it simply ended (`end_turn`,
 * `stop_sequence`; some upstreams say so although they called tools, wire-formats §6 #7) ends in
 * `tool_use`. A truncation, refusal or pause keeps its reason, so a tool call cut off by the token limit
 * is never presented as a finished one; and `tool_use` without a call to run is a plain end, so no client
 * waits for tool results nobody asked for.
 */
export function stopReasonWithTools(stop: StopReason, hasToolCalls: boolean): StopReason {
  if (!hasToolCalls) return stop === 'tool_use' ? 'end_turn' : stop;
  return stop === 'end_turn' || stop === 'stop_sequence' ? 'tool_use' : stop;
}

export interface CanonicalUsage {
  /** Uncached input tokens only. */
  input_tokens: number;
  output_tokens: number;
  /** Cache reads. */
  cached_input_tokens: number;
  /** Cache writes. */
  cache_creation_input_tokens: number;
  /** The part of the cache writes with a one-hour lifetime (Anthropic `cache_creation.ephemeral_1h_input_tokens`). */
  cache_creation_1h_input_tokens?: number;
  /**
   * Server-side web searches the provider ran and bills per use (Anthropic
   * `usage.server_tool_use.web_search_requests`, OpenAI Responses `web_search_call` output items).
   */
  web_search_requests?: number;
  /** Subset of output_tokens, when the upstream reports it. */
  reasoning_tokens?: number;
  /**
   * The service tier the provider says it ran the call at (OpenAI's `service_tier` of the response or its
   * chunks, Anthropic's `usage.speed`): its prices apply when the model has them (models/pricing.ts).
   */
  service_tier?: string;
  /** Cost the upstream itself reported (OpenRouter `usage.cost`), as a decimal string. */
  upstream_cost?: string;
  /** The upstream's stream ended without reporting usage (a server ignoring include_usage): counts are 0. */
  missing?: true;
  /**
   * Some counts are the gateway's estimate, not the upstream's: a call that ended (client cancel, broken
   * stream, body lost) before the upstream stated what it bills (llm/partial-usage.ts).
   */
  estimated?: true;
}

export interface CanonicalResponse {
  id: string;
  /** Model the upstream reports; shapes echo the requested name instead. */
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason;
  stop_sequence: string | null;
  usage: CanonicalUsage;
}

export function emptyUsage(): CanonicalUsage {
  return { input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, cache_creation_input_tokens: 0 };
}

/** Total prompt size: uncached + cache reads + cache writes (wire-formats §1.8). */
export function totalInputTokens(u: CanonicalUsage): number {
  return u.input_tokens + u.cached_input_tokens + u.cache_creation_input_tokens;
}
