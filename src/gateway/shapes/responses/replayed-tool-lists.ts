/**
 * @module Codex's `additional_tools` input item (its default model's tools, sent in the Responses "lite" dialect
 * in place of `tools`) replayed in the history of a conversation continued on another model (`codex exec resume
 * --last -m sonnet`): Codex then sends that model's own `tools`, and the item only says what an earlier turn's
 * model could call. On another wire such an item is left out of the translation (the request's own `tools` are
 * what the model is offered), as the history would read without it. A request whose tools are given by such an
 * item alone (Codex's request for its default model) is still refused by name (openai-only.ts).
 */
import type { CanonicalMessage, ContentBlock, TextBlock } from '../../../canonical/message.ts';
import type { CanonicalRequest } from '../../../canonical/request.ts';

/** Whether a Responses `body`'s `additional_tools` items are a replayed history: it gives its own `tools`. */
export function replaysToolLists(body: Record<string, unknown>): boolean {
  return Array.isArray(body.tools) && body.tools.length > 0;
}

/**
 * `req` (decoded from a Responses body) without its `additional_tools` items, read as if the client had not
 * sent them: a turn left empty goes, turns of one role that it separated are one turn again, and the
 * system/developer messages before the first other turn are the leading system prompt; `req` itself when it
 * holds none.
 */
export function withoutToolLists(req: CanonicalRequest): CanonicalRequest {
  if (!req.messages.some((m) => m.content.some(isToolList))) return req;
  const system: TextBlock[] = [...req.system];
  const messages: CanonicalMessage[] = [];
  for (const m of req.messages) {
    const content = m.content.filter((b) => !isToolList(b));
    if (content.length === 0) continue;
    const last = messages.at(-1);
    if (m.role === 'system' && last === undefined) system.push(...(content as TextBlock[]));
    else if (last && last.role === m.role && m.role !== 'system') last.content.push(...content);
    else messages.push({ ...m, content });
  }
  return { ...req, system, messages };
}

function isToolList(block: ContentBlock): boolean {
  return block.type === 'raw' && block.wire === 'openai_responses' && block.value.type === 'additional_tools';
}
