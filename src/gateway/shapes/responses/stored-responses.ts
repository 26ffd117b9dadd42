/**
 * @module Responses kept in memory so a follow-up that names them works on any model (issue 13):
 * `previous_response_id` puts the stored input and output before the new input, and an `item_reference`
 * (the Vercel AI SDK sends one for earlier assistant text by default) is replaced by the stored output item.
 * Kept are the gateway's own answers on translated models and, under OpenAI's id, an OpenAI model's answers
 * (same wire), which OpenAI stores itself: a follow-up on an OpenAI model still names those to OpenAI, one
 * on another model gets them spelled out (a conversation moved from an OpenAI model to a Claude model).
 * Bounded by size, oldest dropped first, and lost on restart: a follow-up naming what is not kept still gets
 * the 400 that says to send the whole conversation. `store: false` keeps nothing. Every answer belongs to
 * the gateway key that asked for it: another key naming it finds nothing (ids are guessable).
 */

/** Who stores a kept response besides this gateway: no one (a translated answer), or OpenAI. */
export type StoredBy = 'gateway' | 'openai';

export interface StoredResponses {
  /**
   * Keeps `response` (a Responses object) with the input items that produced it, for `owner` (the gateway
   * key), unless it says store: false or did not finish (a failed, queued or cancelled response).
   * `size`: what it weighs against the bound when the caller knows it from the texts it already has (the
   * request and answer bodies of a same-wire call, an upper bound); else their JSON is measured.
   */
  remember(
    response: Record<string, unknown>,
    input: readonly unknown[],
    owner: string,
    storedBy?: StoredBy,
    size?: number,
  ): void;
  /**
   * Keeps an OpenAI model's answer (same wire, stored by OpenAI too) to a request that named nothing kept
   * here, as the two texts the gateway already holds: `requestText` as the client sent it and `answerText`,
   * the upstream's answer of which `response` is the parse (or, streamed, the data of its terminal frame,
   * whose `response` it is). Nothing but the texts and the output items' ids is
   * held, and they are parsed again only when a follow-up names them: strings are what the bound counts and
   * cost the garbage collector nothing to trace, where the parsed objects took about three times their JSON
   * size on the heap and were traced at every full collection.
   */
  keepText(response: Record<string, unknown>, requestText: string, answerText: string, owner: string): void;
  /**
   * `body` with the stored state of `owner` it names expanded; `body` itself when it names nothing kept.
   * `portable`: for an OpenAI model, what OpenAI stored stays named as sent, and the gateway's own items go
   * in without the ids and status only this gateway knows and without reasoning items (their signatures
   * are another provider's). Otherwise OpenAI's hosted web search calls are left out (the answer's text
   * holds what the search found, and no other model can run one).
   */
  expand(body: Record<string, unknown>, owner: string, portable?: boolean): Record<string, unknown>;
  /**
   * The first response or item `body` names that is kept for another key than `owner` (`previous_response_id`,
   * an `item_reference`), with the field naming it; undefined when none. OpenAI holds its own answers for
   * every key of the gateway's account alike, so one named to it as sent would continue another key's
   * conversation: such a request is refused before it goes anywhere.
   */
  foreign(body: Record<string, unknown>, owner: string): { param: string; id: string } | undefined;
  /** Bytes held (the JSON size of what is kept). */
  readonly bytes: number;
}

/**
 * What each input item of a body `expand` spelled out is called in the client's terms: `input.N` for the client's
 * own item N (an `item_reference` too, for the item it stands for), `previous_response_id.input.N` for the Nth
 * item the earlier turns put before it (their input and output, oldest first). Undefined for any other body.
 */
export function expandedItemNames(body: Record<string, unknown>): readonly string[] | undefined {
  return itemNames.get(body);
}

const itemNames = new WeakMap<object, readonly string[]>();

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
  /** An output item's id: the entry holding it and its place in that entry's output. */
  const items = new Map<string, ItemRef>();
  let bytes = 0;

  const drop = (id: string) => {
    const entry = responses.get(id);
    if (!entry) return;
    responses.delete(id);
    bytes -= entry.bytes;
    for (const itemId of entry.itemIds) items.delete(itemId);
  };

  /** Keeps `entry` under `id` (its output items under their ids), dropping the oldest beyond the bound. */
  const keep = (id: string, entry: Entry, output: readonly Record<string, unknown>[]) => {
    if (entry.bytes > maxBytes / 4) return; // one conversation may not push out everything else
    drop(id);
    responses.set(id, entry);
    bytes += entry.bytes;
    output.forEach((item, index) => {
      if (typeof item.id !== 'string') return;
      entry.itemIds.push(item.id);
      items.set(item.id, { entry, index });
    });
    for (const oldest of responses.keys()) {
      if (bytes <= maxBytes) break;
      drop(oldest);
    }
  };

  return {
    remember(response, input, owner, storedBy = 'gateway', knownSize) {
      const id = response.id;
      const output = outputOf(response);
      if (typeof id !== 'string' || response.store === false || unfinished(response.status)) return;
      const size = knownSize ?? JSON.stringify(input).length + JSON.stringify(output).length;
      keep(id, new Entry(owner, storedBy, size, input, output), output);
    },
    keepText(response, requestText, answerText, owner) {
      const id = response.id;
      if (typeof id !== 'string' || response.store === false || unfinished(response.status)) return;
      const size = requestText.length + answerText.length;
      keep(id, new Entry(owner, 'openai', size, requestText, answerText), outputOf(response));
    },
    expand(body, owner, portable = false) {
      const fit = (items: readonly unknown[]) =>
        portable ? items.flatMap(portableItem) : items.filter(translatable);
      // kept for this key, and not OpenAI's own on its way to OpenAI (OpenAI has it)
      const mine = (kept: Entry | undefined): kept is Entry =>
        kept !== undefined && kept.owner === owner && !(portable && kept.storedBy === 'openai');
      let input = inputItems(body);
      const previous = body.previous_response_id;
      const entry = typeof previous === 'string' ? responses.get(previous) : undefined;
      // a previous response kept for another key, or not at all, stays as named (OpenAI's, or a 400)
      const resolved = mine(entry);
      // most requests name nothing kept: nothing to spell out, nothing built
      if (!resolved && !input.some(isItemReference)) return body;
      let names = input.map((_, i) => `input.${i}`);
      let changed = false;
      if (resolved) {
        // most recently used last, so eviction drops conversations nobody continues
        responses.delete(previous as string);
        responses.set(previous as string, entry);
        const earlier = [...fit(entry.input), ...fit(entry.output)];
        input = [...earlier, ...input];
        names = [...earlier.map((_, i) => `previous_response_id.input.${i}`), ...names];
        changed = true;
      }
      const spelled: unknown[] = [];
      const spelledNames: string[] = [];
      input.forEach((item, i) => {
        const stored = isItemReference(item) ? items.get(item.id) : undefined;
        const now = stored && mine(stored.entry) ? fit([stored.entry.output[stored.index]]) : [item];
        if (now[0] !== item) changed = true;
        for (const one of now) {
          spelled.push(one);
          spelledNames.push(names[i]!);
        }
      });
      if (!changed) return body;
      const { previous_response_id: _, ...rest } = body;
      const out = resolved ? { ...rest, input: spelled } : { ...body, input: spelled };
      itemNames.set(out, spelledNames);
      return out;
    },
    foreign(body, owner) {
      const previous = body.previous_response_id;
      if (typeof previous === 'string' && (responses.get(previous)?.owner ?? owner) !== owner)
        return { param: 'previous_response_id', id: previous };
      for (const item of inputItems(body)) {
        const ref = item as { type?: unknown; id?: unknown };
        if (ref?.type !== 'item_reference' || typeof ref.id !== 'string') continue;
        if ((items.get(ref.id)?.entry.owner ?? owner) !== owner) return { param: 'input', id: ref.id };
      }
      return undefined;
    },
    get bytes() {
      return bytes;
    },
  };
}

// --- internal ---

/**
 * A response whose output is not final (failed, queued, in progress, cancelled): only `completed` and
 * `incomplete` (cut by the token limit, yet continued) are kept.
 */
function unfinished(status: unknown): boolean {
  return status !== undefined && status !== 'completed' && status !== 'incomplete';
}

/** A kept item another model can take: not a hosted web search OpenAI ran (the answer's text holds it). */
function translatable(item: unknown): boolean {
  return (item as { type?: unknown } | null)?.type !== 'web_search_call';
}

/** A kept item as OpenAI can take it (see `expand`'s `portable`). */
function portableItem(item: unknown): unknown[] {
  const i = item as Record<string, unknown>;
  // reasoning sealed by another provider; a Claude model's web search, which OpenAI never ran
  if (i?.type === 'reasoning' || i?.type === 'web_search_call') return [];
  if (i === null || typeof i !== 'object' || i.id === undefined) return [item];
  const { id: _, status: __, ...rest } = i;
  return [rest];
}

/** Where an output item is kept: its entry and its place in the entry's output. */
interface ItemRef {
  entry: Entry;
  index: number;
}

/**
 * One kept exchange: its input and output items, held parsed (a translated answer, encoded by the gateway)
 * or as the request and answer texts, parsed at the first follow-up that reads them (keepText).
 */
class Entry {
  readonly owner: string;
  readonly storedBy: StoredBy;
  /** What it weighs against the bound. */
  readonly bytes: number;
  /** The ids of its output items (what `items` holds for it). */
  readonly itemIds: string[] = [];
  #input: readonly unknown[] | string;
  #output: Record<string, unknown>[] | string;

  constructor(
    owner: string,
    storedBy: StoredBy,
    bytes: number,
    input: readonly unknown[] | string,
    output: Record<string, unknown>[] | string,
  ) {
    this.owner = owner;
    this.storedBy = storedBy;
    this.bytes = bytes;
    this.#input = input;
    this.#output = output;
  }

  get input(): readonly unknown[] {
    if (typeof this.#input === 'string') this.#input = inputItems(JSON.parse(this.#input));
    return this.#input;
  }

  get output(): Record<string, unknown>[] {
    if (typeof this.#output === 'string') this.#output = outputOf(answerOf(JSON.parse(this.#output)));
    return this.#output;
  }
}

/** The response an answer text holds: itself, or a stream's terminal frame's `response`. */
function answerOf(parsed: Record<string, unknown>): Record<string, unknown> {
  const { type, response } = parsed;
  return typeof type === 'string' && response !== null && typeof response === 'object'
    ? (response as Record<string, unknown>)
    : parsed;
}

/** A Responses object's output items. */
function outputOf(response: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(response.output) ? (response.output as Record<string, unknown>[]) : [];
}

/** An `item_reference` input item naming an item by its id. */
function isItemReference(item: unknown): item is { type: 'item_reference'; id: string } {
  const ref = item as { type?: unknown; id?: unknown } | null;
  return ref?.type === 'item_reference' && typeof ref.id === 'string';
}
