/**
 * Anthropic prompt caching as the Messages API bills it, for the fake's default usage: a `cache_control`
 * breakpoint writes the prompt's prefix up to its block (tools, then system, then messages) into a cache
 * kept per model for 5 minutes (`ttl: "1h"`: an hour), and a later request whose prefix up to one of the 20
 * blocks before one of its breakpoints was written reads it. Usage then splits the prompt into
 * `cache_read_input_tokens` (the longest prefix read), `cache_creation_input_tokens` (from there to the last
 * breakpoint; the part ending at a one-hour breakpoint is a one-hour write) and `input_tokens` (the rest).
 * A prefix shorter than the model's minimum cacheable length is never written. A top-level `cache_control`
 * (automatic caching) is one more breakpoint on the last cacheable block, moving with the conversation.
 */

import { createHash } from 'node:crypto';
import { billedInputTokens } from './billing.ts';

/** The split of a request's input tokens; `write1h` is the part of `write` with a one-hour lifetime. */
export type CacheUsage = { input: number; read: number; write: number; write1h: number };

type Obj = Record<string, unknown>;
type Breakpoint = { at: number; ttlMs: number };

const FIVE_MINUTES = 5 * 60_000;
const ONE_HOUR = 60 * 60_000;
/** How many blocks before a breakpoint the API looks for an earlier request's cached prefix. */
const LOOKBACK = 20;

export class FakePromptCache {
  readonly #entries = new Map<string, { tokens: number; expires: number }>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  clear(): void {
    this.#entries.clear();
  }

  /** Reads and writes the cache for one Messages request; undefined when it has no breakpoint. */
  use(body: Obj): CacheUsage | undefined {
    const slots = slotsOf(body);
    const breakpoints: Breakpoint[] = [];
    for (const [at, slot] of slots.entries()) {
      const marker = (slot.block as { cache_control?: { ttl?: string } } | undefined)?.cache_control;
      if (marker) breakpoints.push({ at, ttlMs: marker.ttl === '1h' ? ONE_HOUR : FIVE_MINUTES });
    }
    // a top-level cache_control (automatic caching) places one more breakpoint on the last cacheable block
    const auto = body.cache_control as { ttl?: string } | undefined;
    const last = slots.findLastIndex((slot) => cacheable(slot.block));
    if (auto && typeof auto === 'object' && last >= 0 && !breakpoints.some((bp) => bp.at === last))
      breakpoints.push({ at: last, ttlMs: auto.ttl === '1h' ? ONE_HOUR : FIVE_MINUTES });
    if (breakpoints.length === 0) return undefined;
    breakpoints.sort((a, b) => a.at - b.at);
    const plain = normalized(stripMarkers(body) as Obj);
    const model = String(body.model ?? '');
    const prefixes = new Map<number, { key: string; tokens: number }>();
    const prefix = (at: number) => {
      let p = prefixes.get(at);
      if (!p) {
        const cut = prefixBody(plain, slots[at]);
        p = { key: createHash('sha256').update(model).update(JSON.stringify(cut)).digest('hex'), tokens: 0 };
        p.tokens = billedInputTokens('anthropic', cut);
        prefixes.set(at, p);
      }
      return p;
    };
    const now = this.#now();
    let read = 0;
    let readAt = -1;
    for (const bp of breakpoints)
      for (let at = bp.at; at >= Math.max(0, bp.at - LOOKBACK); at--) {
        const entry = this.#entries.get(prefix(at).key);
        if (entry && entry.expires > now) {
          if (at > readAt) [read, readAt] = [entry.tokens, at];
          entry.expires = Math.max(entry.expires, now + bp.ttlMs);
          break;
        }
      }
    const min = minimumCacheable(model);
    let covered = read;
    let write = 0;
    let write1h = 0;
    for (const bp of breakpoints) {
      const { key, tokens } = prefix(bp.at);
      if (tokens < min) continue;
      const held = this.#entries.get(key);
      this.#entries.set(key, { tokens, expires: Math.max(held?.expires ?? 0, now + bp.ttlMs) });
      if (bp.at > readAt && tokens > covered) {
        write += tokens - covered;
        if (bp.ttlMs === ONE_HOUR) write1h += tokens - covered;
        covered = tokens;
      }
    }
    const total = billedInputTokens('anthropic', plain);
    return { input: Math.max(0, total - covered), read, write, write1h };
  }
}

/** The minimum prompt length the model caches (Anthropic's prompt-caching docs). */
export function minimumCacheable(model: string): number {
  if (/opus-4-[5-9]|haiku-4-5|opus-[5-9]|haiku-[5-9]/.test(model)) return 4096;
  if (/haiku/.test(model)) return 2048;
  return 1024;
}

/**
 * The API's 400s for the blocks marked with cache_control (tools, system, messages, tool results): more than
 * four, or a one-hour mark after a five-minute one (the longer lifetime must come first).
 */
export function cacheBreakpointRefusal(body: Obj): string | undefined {
  let found = 0;
  let short = false;
  let hourAfterShort = false;
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') {
      const o = value as Obj;
      const mark = o.cache_control as { ttl?: unknown } | null | undefined;
      if (mark != null) {
        found++;
        if (mark.ttl === '1h') hourAfterShort ||= short;
        else short = true;
      }
      if (Array.isArray(o.content)) walk(o.content);
    }
  };
  walk([body.tools, body.system, body.messages]);
  if (found > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${found}.`;
  return hourAfterShort
    ? "A ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`."
    : undefined;
}

// --- internal ---

/** Whether a block can carry a breakpoint (thinking blocks and empty text cannot). */
function cacheable(block: unknown): boolean {
  if (typeof block === 'string') return block !== '';
  const b = block as { type?: unknown; text?: unknown } | null;
  if (b?.type === 'thinking' || b?.type === 'redacted_thinking') return false;
  return !(b?.type === 'text' && b.text === '');
}

/** Each cacheable block in prefix order: tools, system blocks, then every message's content blocks. */
type Slot = { block: unknown; tools: number; system: number; message: number; content: number };

function slotsOf(body: Obj): Slot[] {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const system = Array.isArray(body.system) ? body.system : body.system === undefined ? [] : [body.system];
  const messages = Array.isArray(body.messages) ? (body.messages as Obj[]) : [];
  const slots: Slot[] = [];
  for (const [i, block] of tools.entries())
    slots.push({ block, tools: i + 1, system: 0, message: 0, content: 0 });
  for (const [i, block] of system.entries())
    slots.push({ block, tools: tools.length, system: i + 1, message: 0, content: 0 });
  for (const [i, m] of messages.entries()) {
    const content = Array.isArray(m.content) ? m.content : [m.content];
    for (const [j, block] of content.entries())
      slots.push({ block, tools: tools.length, system: system.length, message: i + 1, content: j + 1 });
  }
  return slots;
}

/** The request cut after one slot's block (`plain`: the request without its cache_control markers). */
function prefixBody(plain: Obj, slot: Slot): Obj {
  const tools = Array.isArray(plain.tools) ? plain.tools.slice(0, slot.tools) : [];
  const system = Array.isArray(plain.system)
    ? plain.system.slice(0, slot.system)
    : slot.system > 0
      ? plain.system
      : undefined;
  const messages = ((plain.messages ?? []) as Obj[])
    .slice(0, slot.message)
    .map((m, i) =>
      i + 1 === slot.message && Array.isArray(m.content)
        ? { ...m, content: m.content.slice(0, slot.content) }
        : m,
    );
  return { model: plain.model, tools, system, messages };
}

/** The API reads a string `system` or message content as one text block: both forms cache alike. */
function normalized(body: Obj): Obj {
  const blocks = (content: unknown) =>
    typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  return {
    ...body,
    ...(body.system === undefined ? {} : { system: blocks(body.system) }),
    messages: ((body.messages ?? []) as Obj[]).map((m) => ({ ...m, content: blocks(m.content) })),
  };
}

function stripMarkers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripMarkers);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== 'cache_control')
      .map(([k, v]) => [k, stripMarkers(v)]),
  );
}
