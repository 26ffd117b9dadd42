/**
 * @module CanonicalRequest: what a client asked for, independent of the inbound shape and of the adapter.
 * Unknown top-level fields ride along in `passthrough` so a same-wire upstream still receives them.
 */
import type { CacheControl, CanonicalMessage, TextBlock, Wire } from './message.ts';

export interface FunctionTool {
  type: 'function';
  name: string;
  description?: string;
  /** JSON schema of the input, always an object schema (`{type:'object', properties:{}}` when absent). */
  input_schema: Record<string, unknown>;
  strict?: boolean;
  cache_control?: CacheControl;
}

/** A tool only one wire understands (Anthropic server tools, OpenAI custom tools); see RawBlock. */
export interface RawTool {
  type: 'raw';
  wire: Wire;
  value: Record<string, unknown>;
  /** Where the client sent it (`tools.1`), so a refusal names it. */
  at?: string;
}

export type CanonicalTool = FunctionTool | RawTool;

/** wire-formats §1.5/§2.4: `any` = OpenAI `required`; `tool` = a named function. */
export type ToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/**
 * Thinking: `enabled` with a token budget (Anthropic manual, OpenRouter `reasoning.max_tokens`), `adaptive`
 * (model decides; Anthropic adaptive, OpenAI `reasoning_effort`), `disabled`. Effort is separate
 * (`CanonicalRequest.reasoning_effort`) because Anthropic accepts it without thinking.
 */
export interface ThinkingConfig {
  type: 'enabled' | 'adaptive' | 'disabled';
  budget_tokens?: number;
  display?: 'summarized' | 'omitted';
}

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name?: string;
      description?: string;
      schema: Record<string, unknown>;
      strict?: boolean;
    };

/** Fields and headers of the inbound body the gateway does not model; forwarded only to the same wire. */
export interface Passthrough {
  wire: Wire;
  fields: Record<string, unknown>;
  /** Client headers meaningful to that wire (`anthropic-version`, `anthropic-beta`), lowercase names. */
  headers: Record<string, string>;
}

export interface CanonicalRequest {
  /** The model name exactly as the client sent it (echoed back in responses). */
  model: string;
  /** Leading system/developer prompt; empty when none. */
  system: TextBlock[];
  messages: CanonicalMessage[];
  tools?: CanonicalTool[];
  tool_choice?: ToolChoice;
  /** Absent when an OpenAI client omitted it; the adapter then applies a per-model default. */
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  thinking?: ThinkingConfig;
  /** OpenAI `reasoning_effort`, Anthropic `output_config.effort`, OpenRouter `reasoning.effort`. */
  reasoning_effort?: ReasoningEffort;
  response_format?: ResponseFormat;
  /** Opaque end-user id (Anthropic `metadata.user_id`, OpenAI `user`). */
  user_id?: string;
  /** OpenAI `n`; other wires reject n > 1. */
  n?: number;
  stream: boolean;
  /** OpenAI client asked for `stream_options.include_usage` (Anthropic streams always carry usage). */
  include_usage: boolean;
  passthrough?: Passthrough;
  /**
   * Hosted tools of a Responses request (`web_search`, …) that the canonical tools leave out: an OpenAI model
   * gets them in the client's bytes and bills what they add; another model is sent without them.
   */
  hosted_tools?: string[];
  /**
   * OpenAI's hosted web search asked for (a Responses `web_search` tool, Chat `web_search_options`), in the
   * terms a provider's own search tool takes; only an adapter whose provider runs one sends it (Anthropic's
   * `web_search_20250305`), any other is sent without it.
   */
  web_search?: WebSearchRequest;
}

/** A hosted web search: where it may look and where the user is (OpenAI's approximate location). */
export interface WebSearchRequest {
  /** Domains results may come from only (no scheme), when limited. */
  allowed_domains?: string[];
  user_location?: { city?: string; region?: string; country?: string; timezone?: string };
  /** The request forces the search (a Responses `tool_choice` of the hosted web search's type). */
  forced?: true;
}
