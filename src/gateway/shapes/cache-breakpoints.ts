/**
 * @module OpenAI's explicit prompt-cache breakpoints (`prompt_cache_breakpoint: {mode: "explicit", ttl?}` on a
 * Chat Completions or Responses content part) in a translation: the canonical `cache_control` (Anthropic's
 * `{type: "ephemeral", ttl: "1h"}` on that block; OpenRouter takes it on text parts). OpenAI's `ttl` is a
 * minimum lifetime (`30m`, the default, or `12h`); Anthropic keeps a prefix 5 minutes or one hour, and every
 * Claude model takes the hour, so both become `1h` (the one that is at least as long as 30 minutes, and the
 * longest there is for 12 hours), its writes billed at the model's `cache_write_1h`. Anthropic refuses more
 * than four breakpoints in a request: the last four (nearest the end of the prompt, whose prefixes hold the
 * others') are kept and the earlier ones named in `svc-dropped-params`.
 */
import type { CacheControl, ContentBlock, TextBlock } from '../../canonical/message.ts';
import type { CanonicalRequest } from '../../canonical/request.ts';

/** The most cache breakpoints the Messages API takes in one request. */
export const MAX_BREAKPOINTS = 4;

const HOUR: CacheControl = { type: 'ephemeral', ttl: '1h' };

/** The objects whose `cache_control` a decoder set from a breakpoint (blocks, or a raw block's value). */
const fromBreakpoint = new WeakSet<object>();

/** Whether a content part asks for an explicit breakpoint (what the API itself takes: `mode: "explicit"`). */
export function hasBreakpoint(part: unknown): boolean {
  const bp = (part as { prompt_cache_breakpoint?: { mode?: unknown } | null } | null)
    ?.prompt_cache_breakpoint;
  return bp?.mode === 'explicit';
}

/**
 * `target` (a canonical block, or the value of a raw one an adapter maps) with the `cache_control` of the
 * part's breakpoint, when it asks for one and carries no `cache_control` of its own (OpenRouter's form wins).
 */
export function withBreakpoint<T extends object>(target: T, part: unknown): T {
  if (!hasBreakpoint(part) || (target as { cache_control?: unknown }).cache_control) return target;
  const out = { ...target, cache_control: { ...HOUR } };
  fromBreakpoint.add(out);
  return out;
}

/**
 * Leaves only as many of the breakpoints a decoder set as fit beside the client's own `cache_control` marks
 * (OpenRouter's form) in MAX_BREAKPOINTS, the last ones (in the request's order, which is the body's: system
 * blocks are the leading messages), as breakpointsLeftOut names the others. The API also refuses a one-hour
 * mark after a five-minute one (longer lifetimes first), so a kept breakpoint after a client's five-minute
 * mark becomes a five-minute one.
 */
export function keepLastBreakpoints(req: CanonicalRequest): void {
  const marked: object[] = [];
  const order: object[] = [];
  let own = 0;
  const visit = (b: ContentBlock | TextBlock) => {
    const target = b.type === 'raw' ? b.value : b;
    // of a raw block, only a file's cache_control goes upstream (on its document)
    const cc =
      b.type !== 'raw' || b.value.type === 'file'
        ? (target as { cache_control?: unknown }).cache_control
        : undefined;
    if (fromBreakpoint.has(target)) {
      if (!(b.type === 'text' && b.text === '')) marked.push(target);
    } else if (cc) own++;
    if (cc) order.push(target);
    if (b.type === 'tool_result' && typeof b.content !== 'string') b.content.forEach(visit);
  };
  for (const t of req.tools ?? []) {
    const cc = (t as { cache_control?: CacheControl }).cache_control;
    if (cc) own++;
    if (cc) order.push(t);
  }
  req.system?.forEach(visit);
  for (const m of req.messages) m.content.forEach(visit);
  if (marked.length === 0) return;
  for (const t of marked.slice(0, Math.max(0, marked.length - Math.max(0, MAX_BREAKPOINTS - own))))
    delete (t as { cache_control?: unknown }).cache_control;
  let short = false;
  for (const t of order) {
    const cc = (t as { cache_control?: CacheControl }).cache_control;
    if (!cc) continue;
    if (!fromBreakpoint.has(t)) short ||= cc.ttl !== '1h';
    else if (short) (t as { cache_control?: CacheControl }).cache_control = { type: 'ephemeral' };
  }
}

/**
 * The breakpoints of a Chat Completions (`messages.N.content.M`) or Responses (`input.N.content.M`,
 * `input.N.output.M`) body that keepLastBreakpoints leaves out, as `<part>.prompt_cache_breakpoint`. `names`:
 * what each input item is called instead of `input.N` (a follow-up's items from its earlier turns).
 */
export function breakpointsLeftOut(
  body: Record<string, unknown>,
  shape: 'openai' | 'openai_responses',
  names?: readonly string[],
): string[] {
  const list = shape === 'openai' ? body.messages : body.input;
  if (!Array.isArray(list)) return [];
  const paths: string[] = [];
  let own = 0;
  const key = shape === 'openai' ? 'messages' : 'input';
  list.forEach((item: Record<string, unknown> | null, i) => {
    for (const field of ['content', 'output']) {
      const parts = item?.[field];
      if (!Array.isArray(parts)) continue;
      parts.forEach((p: Record<string, unknown> | null, j) => {
        if (shape === 'openai' && ownMark(item?.role, p)) own++;
        else if (hasBreakpoint(p) && p?.text !== '')
          paths.push(`${names?.[i] ?? `${key}.${i}`}.${field}.${j}.prompt_cache_breakpoint`);
      });
    }
  });
  return paths.slice(0, Math.max(0, paths.length - Math.max(0, MAX_BREAKPOINTS - own)));
}

/**
 * Whether a Chat Completions part carries a `cache_control` of the client's that the decoder keeps (OpenRouter's
 * `{type: "ephemeral"}` on a text or image part outside an assistant turn; any on a file part), which then wins
 * over the part's breakpoint and takes one of the MAX_BREAKPOINTS.
 */
function ownMark(role: unknown, p: Record<string, unknown> | null): boolean {
  const cc = p?.cache_control as { type?: unknown } | undefined;
  if (p?.type === 'file') return Boolean(cc);
  return role !== 'assistant' && (p?.type === 'text' || p?.type === 'image_url') && cc?.type === 'ephemeral';
}
