/**
 * @module Responses the gateway answered on a translated model, kept in memory so a follow-up that names
 * them works on any model (issue 13): `previous_response_id` puts the stored input and output before the
 * new input, and an `item_reference` (the Vercel AI SDK sends one for earlier assistant text by default)
 * is replaced by the stored output item. Bounded by size, oldest dropped first, and lost on restart: a
 * follow-up naming what is not kept still gets the 400 that says to send the whole conversation. An OpenAI
 * model's responses are stored by OpenAI itself (same wire), and `store: false` keeps nothing. Every answer
 * belongs to the gateway key that asked for it: another key naming it finds nothing (ids are guessable).
 */

export interface StoredResponses {
  /**
   * Keeps `response` (a Responses object) with the input items that produced it, for `owner` (the gateway
   * key), unless it says store: false.
   */
  remember(response: Record<string, unknown>, input: readonly unknown[], owner: string): void;
  /**
   * `body` with the stored state of `owner` it names expanded; `body` itself when it names nothing kept.
   * `portable`: for an OpenAI model, which never stored them, the kept items go in without the ids and
   * status only this gateway knows and without reasoning items (their signatures are another provider's).
   */
  expand(body: Record<string, unknown>, owner: string, portable?: boolean): Record<string, unknown>;
  /** Bytes held (the JSON size of what is kept). */
  readonly bytes: number;
}

/** What the gateway keeps by default: a few hundred long agent conversations. */
export const STORED_RESPONSES_MAX_BYTES = 64 * 1024 * 1024;

/**
 * `request` asking for reasoning signatures (`include: ["reasoning.encrypted_content"]`): what is kept
 * must replay thinking valid for Anthropic even when the client itself did not ask for them.
 */
export function withSignatures(request: Record<string, unknown> | undefined): Record<string, unknown> {
  const include = Array.isArray(request?.include) ? (request.include as unknown[]) : [];
  if (include.includes(SIGNATURES)) return request ?? {};
  return { ...request, include: [...include, SIGNATURES] };
}

const SIGNATURES = 'reasoning.encrypted_content';

/** The input of a Responses request as items (a string input is one user message). */
export function inputItems(body: Record<string, unknown>): unknown[] {
  if (Array.isArray(body.input)) return body.input;
  return typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : [];
}

export function createStoredResponses(maxBytes = STORED_RESPONSES_MAX_BYTES): StoredResponses {
  const responses = new Map<string, Entry>();
  const items = new Map<string, { owner: string; item: Record<string, unknown> }>();
  let bytes = 0;

  const drop = (id: string) => {
    const entry = responses.get(id);
    if (!entry) return;
    responses.delete(id);
    bytes -= entry.bytes;
    for (const item of entry.output) if (typeof item.id === 'string') items.delete(item.id);
  };

  return {
    remember(response, input, owner) {
      const id = response.id;
      const output = Array.isArray(response.output) ? (response.output as Record<string, unknown>[]) : [];
      if (typeof id !== 'string' || response.store === false) return;
      const size = JSON.stringify(input).length + JSON.stringify(output).length;
      if (size > maxBytes / 4) return; // one conversation may not push out everything else
      drop(id);
      responses.set(id, { owner, input, output, bytes: size });
      bytes += size;
      for (const item of output) if (typeof item.id === 'string') items.set(item.id, { owner, item });
      for (const oldest of responses.keys()) {
        if (bytes <= maxBytes) break;
        drop(oldest);
      }
    },
    expand(body, owner, portable = false) {
      const fit = (items: readonly unknown[]) => (portable ? items.flatMap(portableItem) : items);
      let input = inputItems(body);
      let changed = false;
      const previous = body.previous_response_id;
      const entry = typeof previous === 'string' ? responses.get(previous) : undefined;
      // a previous response kept for another key, or not at all, stays as named (OpenAI's, or a 400)
      const resolved = entry !== undefined && entry.owner === owner;
      if (resolved) {
        // most recently used last, so eviction drops conversations nobody continues
        responses.delete(previous as string);
        responses.set(previous as string, entry);
        input = [...fit(entry.input), ...fit(entry.output), ...input];
        changed = true;
      }
      input = input.flatMap((item) => {
        const ref = item as { type?: unknown; id?: unknown };
        const stored =
          ref?.type === 'item_reference' && typeof ref.id === 'string' ? items.get(ref.id) : undefined;
        if (!stored || stored.owner !== owner) return [item];
        changed = true;
        return fit([stored.item]);
      });
      if (!changed) return body;
      if (!resolved) return { ...body, input };
      const { previous_response_id: _, ...rest } = body;
      return { ...rest, input };
    },
    get bytes() {
      return bytes;
    },
  };
}

// --- internal ---

/** A kept item as OpenAI can take it (see `expand`'s `portable`). */
function portableItem(item: unknown): unknown[] {
  const i = item as Record<string, unknown>;
  if (i?.type === 'reasoning') return [];
  if (i === null || typeof i !== 'object' || i.id === undefined) return [item];
  const { id: _, status: __, ...rest } = i;
  return [rest];
}

interface Entry {
  owner: string;
  input: readonly unknown[];
  output: Record<string, unknown>[];
  bytes: number;
}
