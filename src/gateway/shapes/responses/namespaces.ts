/**
 * @module Responses `namespace` tools on models of other wires (Codex sends one, `multi_agent_v1`, on every
 * request). Only the Responses API groups tools, so a translation flattens each member function into a
 * plain function named `<namespace>__<name>` (a name every wire accepts), and the answer's calls of such a
 * name go back to the client as the API writes them: the member's own `name` plus `namespace`. Input
 * `function_call` items that carry a `namespace` are flattened the same way.
 * Hosted web search is the other tool Codex always sends; a Claude model runs it with its own search tool
 * (web-search.ts), any other model is sent without it, and the `svc-dropped-tools` response header says so.
 */
import { WEB_SEARCH_TOOL_TYPES } from '../web-search.ts';

/** Between a namespace and its member's name in a flattened tool name. */
export const NAMESPACE_SEPARATOR = '__';

/** Response header listing the hosted tools a translated Responses request was sent without. */
export const DROPPED_TOOLS_HEADER = 'svc-dropped-tools';

/**
 * Hosted tools a translation leaves out, unless the model's provider runs a search of its own (web-search.ts):
 * the answer is then the model's own, without searching the web.
 */
const DROPPABLE_HOSTED_TOOLS = WEB_SEARCH_TOOL_TYPES;

export function flatToolName(namespace: string, name: string): string {
  return `${namespace}${NAMESPACE_SEPARATOR}${name}`;
}

/** Whether a tool of this type is left out of a translated request rather than refused. */
export function isDroppableHostedTool(type: unknown): boolean {
  return typeof type === 'string' && DROPPABLE_HOSTED_TOOLS.has(type);
}

/** The types of the hosted tools in `body.tools` that a translation leaves out, in order, once each. */
export function droppedHostedTools(body: Record<string, unknown>): string[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Array<{ type?: unknown }>) : [];
  return [...new Set(tools.map((t) => t?.type).filter(isDroppableHostedTool) as string[])];
}

/** A flattened name's namespace and member name, given the request's tools. */
export interface NamespacedName {
  namespace: string;
  name: string;
}

const cache = new WeakMap<object, Map<string, NamespacedName>>();

/**
 * The namespace and member name of the flattened tool name `flat`, when the client's request declared it
 * inside a `namespace` tool; null for any other name (a plain function keeps its name as it is).
 */
export function namespacedName(
  flat: string,
  request: Record<string, unknown> | undefined,
): NamespacedName | null {
  if (!request || !flat.includes(NAMESPACE_SEPARATOR)) return null;
  let names = cache.get(request);
  if (!names) {
    names = new Map();
    const tools = Array.isArray(request.tools) ? (request.tools as Array<Record<string, unknown>>) : [];
    for (const t of tools) {
      if (t?.type !== 'namespace' || typeof t.name !== 'string' || !Array.isArray(t.tools)) continue;
      for (const m of t.tools as Array<Record<string, unknown>>)
        if (typeof m?.name === 'string')
          names.set(flatToolName(t.name, m.name), { namespace: t.name, name: m.name });
    }
    cache.set(request, names);
  }
  return names.get(flat) ?? null;
}

/** The `name` (and `namespace`, when it has one) of an output `function_call` item for a tool named `flat`. */
export function callNameFields(
  flat: string,
  request: Record<string, unknown> | undefined,
): { name: string; namespace?: string } {
  const n = namespacedName(flat, request);
  return n ? { name: n.name, namespace: n.namespace } : { name: flat };
}
