/**
 * @module OpenAI's hosted web search as the canonical WebSearchRequest: a Responses `web_search` tool (or
 * `web_search_preview`, or a dated version) and Chat Completions `web_search_options`. Where the results may
 * come from (`filters.allowed_domains`) and the user's approximate location carry over; a Claude model runs
 * the search with its own tool (adapters/anthropic/request.ts). `search_context_size` has no form there: it is
 * left out and named in svc-dropped-params (webSearchLeftOut).
 * Codex's `external_web_access: false` asks for OpenAI's cached index only, which no other provider has: such
 * a tool asks for no search elsewhere (it is left out and named in svc-dropped-tools, as before).
 */

import type { AdapterName } from '../../adapters/names.ts';
import type { WebSearchRequest } from '../../canonical/request.ts';
import type { InboundShape } from '../../events/catalog.ts';
import { invalid } from './shape.ts';

/** The Responses tool types of OpenAI's hosted web search. */
export const WEB_SEARCH_TOOL_TYPES: ReadonlySet<string> = new Set([
  'web_search',
  'web_search_preview',
  'web_search_2025_08_26',
  'web_search_preview_2025_03_11',
]);

/** Adapters whose provider runs a web search of its own (Anthropic's `web_search_20250305` tool). */
const SEARCHING_ADAPTERS: ReadonlySet<AdapterName> = new Set(['anthropic']);

/** Whether a translated call on `adapter` runs the hosted web search a request asks for. */
export function runsWebSearch(adapter: AdapterName): boolean {
  return SEARCHING_ADAPTERS.has(adapter);
}

/**
 * The web search a Responses request's `tools` ask for, from its first hosted web search tool that may search
 * live; forced when its `tool_choice` is of a hosted web search type.
 */
export function responsesWebSearch(
  tools: readonly unknown[] | undefined,
  toolChoice?: unknown,
): WebSearchRequest | undefined {
  const i = searchToolIndex(tools ?? []);
  if (i < 0) return undefined;
  const tool = tools![i] as Record<string, unknown>;
  const filters = tool.filters as Record<string, unknown> | null | undefined;
  const search = webSearch(`tools.${i}`, filters?.allowed_domains, tool.user_location);
  if (isWebSearchChoice(toolChoice)) search.forced = true;
  return search;
}

/** Whether a Responses `tool_choice` forces the hosted web search (`{type: "web_search"}`, `web_search_preview`…). */
export function isWebSearchChoice(choice: unknown): boolean {
  return (
    typeof choice === 'object' &&
    choice !== null &&
    WEB_SEARCH_TOOL_TYPES.has(String((choice as { type?: unknown }).type))
  );
}

/**
 * Why a translated Responses request's forced web search (`tool_choice` of a hosted web search type) cannot be
 * served on `adapter`, or null when it can: a provider with a search of its own (Claude's, forced by its own
 * tool_choice) runs it when `tools` hold a web search tool that may search the live web.
 */
export function forcedSearchRefusal(
  body: Record<string, unknown>,
  adapter: AdapterName | undefined,
): { what: string; instead: string; by?: string } | null {
  const type = String((body.tool_choice as { type?: unknown }).type);
  const what = `a tool_choice of type ${type} (a forced web search)`;
  if (adapter === undefined || !runsWebSearch(adapter))
    return {
      what,
      by: 'an OpenAI or Claude model',
      instead: 'leave tool_choice out (this model is sent without the web search), or use such a model',
    };
  if (responsesWebSearch(Array.isArray(body.tools) ? body.tools : undefined)) return null;
  return {
    what: `${what} without a web search tool among tools that searches the live web (external_web_access: false asks for OpenAI's cached index only)`,
    instead: `declare a {"type": "${type}"} tool that may search the live web, or use an OpenAI model`,
  };
}

/** The web search Chat Completions `web_search_options` ask for (its location nests under `approximate`). */
export function chatWebSearch(options: unknown): WebSearchRequest | undefined {
  if (options == null) return undefined;
  if (typeof options !== 'object' || Array.isArray(options))
    invalid('web_search_options', 'must be an object');
  const location = (options as { user_location?: unknown }).user_location as
    | { approximate?: unknown }
    | null
    | undefined;
  return webSearch('web_search_options', undefined, location?.approximate ?? location);
}

/**
 * What a provider's own search leaves out of the hosted web search a request asks for: its
 * `search_context_size` (`tools.N.search_context_size`, `web_search_options.search_context_size`).
 */
export function webSearchLeftOut(body: Record<string, unknown>, shape: InboundShape): string[] {
  if (shape === 'openai') {
    const options = body.web_search_options as { search_context_size?: unknown } | null | undefined;
    return options?.search_context_size != null ? ['web_search_options.search_context_size'] : [];
  }
  if (shape !== 'openai_responses' || !Array.isArray(body.tools)) return [];
  const i = searchToolIndex(body.tools);
  const tool = body.tools[i] as { search_context_size?: unknown } | undefined;
  return tool?.search_context_size != null ? [`tools.${i}.search_context_size`] : [];
}

// --- internal ---

/** The index of the first hosted web search tool that may search the live web, or -1. */
function searchToolIndex(tools: readonly unknown[]): number {
  return tools.findIndex((t) => {
    const tool = t as Record<string, unknown> | null;
    return WEB_SEARCH_TOOL_TYPES.has(String(tool?.type)) && tool?.external_web_access !== false;
  });
}

const LOCATION_FIELDS = ['city', 'region', 'country', 'timezone'] as const;

function webSearch(at: string, domains: unknown, location: unknown): WebSearchRequest {
  const out: WebSearchRequest = {};
  if (domains != null) {
    if (!Array.isArray(domains) || domains.some((d) => typeof d !== 'string' || d.trim() === ''))
      invalid(`${at}.filters.allowed_domains`, 'must be a list of domain names');
    // Claude takes a domain without its scheme (example.com, not https://example.com)
    const names = (domains as string[]).map((d) => d.trim().replace(/^https?:\/\//i, ''));
    if (names.length > 0) out.allowed_domains = names;
  }
  if (location != null) {
    if (typeof location !== 'object' || Array.isArray(location))
      invalid(`${at}.user_location`, 'must be an object');
    const l = location as Record<string, unknown>;
    const fields: NonNullable<WebSearchRequest['user_location']> = {};
    for (const key of LOCATION_FIELDS) {
      const value = l[key];
      if (value == null || value === '') continue;
      if (typeof value !== 'string') invalid(`${at}.user_location.${key}`, 'must be a string');
      fields[key] = value;
    }
    if (Object.keys(fields).length > 0) out.user_location = fields;
  }
  return out;
}
