/**
 * @module A Claude model's web searches (its `server_tool_use` named `web_search` and the
 * `web_search_tool_result` that answers it) as the Responses API's `web_search_call` output items: one per
 * search, where the search stands in the answer (before the text citing what it found), `action` naming the
 * query, status `completed` (`failed` when the result is Claude's web_search_tool_result_error), and the
 * result pages as `action.sources` when the request asked for them (`include: ["web_search_call.action.sources"]`).
 * The result block itself is no item; the text's citations are its `url_citation` annotations (encode.ts).
 */
import type { ContentBlock } from '../../../canonical/message.ts';

/** A search Claude ran: its server tool use id and query. */
export interface SearchCall {
  id: string;
  query: string;
}

/** What a search found: the pages, or that it failed. */
export interface SearchOutcome {
  toolUseId: string;
  failed: boolean;
  urls: string[];
}

/** The search a raw Anthropic block starts (`server_tool_use` named `web_search`), else null. */
export function searchCallOf(block: Record<string, unknown>): SearchCall | null {
  if (block.type !== 'server_tool_use' || block.name !== 'web_search') return null;
  const query = (block.input as { query?: unknown } | undefined)?.query;
  return { id: String(block.id ?? ''), query: typeof query === 'string' ? query : '' };
}

/** The outcome a raw Anthropic block holds (`web_search_tool_result`), else null. */
export function searchOutcomeOf(block: Record<string, unknown>): SearchOutcome | null {
  if (block.type !== 'web_search_tool_result') return null;
  const content = block.content;
  const pages = Array.isArray(content) ? (content as Array<{ type?: unknown; url?: unknown }>) : [];
  return {
    toolUseId: String(block.tool_use_id ?? ''),
    failed: !Array.isArray(content),
    urls: pages.flatMap((p) => (p?.type === 'web_search_result' && typeof p.url === 'string' ? [p.url] : [])),
  };
}

/** The outcome of `call` among an answer's blocks (undefined while it is not there yet). */
export function outcomeIn(content: readonly ContentBlock[], call: SearchCall): SearchOutcome | undefined {
  for (const b of content) {
    const outcome = b.type === 'raw' && b.wire === 'anthropic' ? searchOutcomeOf(b.value) : null;
    if (outcome?.toolUseId === call.id) return outcome;
  }
  return undefined;
}

/** The `web_search_call` item id of the search at canonical block `index`. */
export function searchItemId(base: string, index: number): string {
  return `ws_${base}_${index}`;
}

/**
 * A `web_search_call` item: `in_progress` (as a stream announces it, with no query yet, as OpenAI's does) or
 * finished with its outcome (`completed` when the answer holds no outcome: the search ran, as its billing says).
 */
export function webSearchCallItem(
  id: string,
  call: SearchCall,
  outcome: SearchOutcome | undefined,
  request: Record<string, unknown> | undefined,
  status?: 'in_progress',
): Record<string, unknown> {
  if (status) return { id, type: 'web_search_call', status, action: { type: 'search' } };
  const action: Record<string, unknown> = { type: 'search', query: call.query };
  if (wantsSources(request)) action.sources = (outcome?.urls ?? []).map((url) => ({ type: 'url', url }));
  return { id, type: 'web_search_call', status: outcome?.failed ? 'failed' : 'completed', action };
}

function wantsSources(request: Record<string, unknown> | undefined): boolean {
  const include = request?.include;
  return Array.isArray(include) && include.includes('web_search_call.action.sources');
}
