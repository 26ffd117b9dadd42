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
 * Leaves only the last MAX_BREAKPOINTS of the breakpoints a decoder set (in the request's order, which is
 * the body's: system blocks are the leading messages), as breakpointsLeftOut names the others.
 */
export function keepLastBreakpoints(req: CanonicalRequest): void {
  const marked: object[] = [];
  const visit = (b: ContentBlock | TextBlock) => {
    const target = b.type === 'raw' ? b.value : b;
    if (fromBreakpoint.has(target) && !(b.type === 'text' && b.text === '')) marked.push(target);
    if (b.type === 'tool_result' && typeof b.content !== 'string') b.content.forEach(visit);
  };
  req.system?.forEach(visit);
  for (const m of req.messages) m.content.forEach(visit);
  for (const t of marked.slice(0, Math.max(0, marked.length - MAX_BREAKPOINTS)))
    delete (t as { cache_control?: unknown }).cache_control;
}

/**
 * The breakpoints of a Chat Completions (`messages.N.content.M`) or Responses (`input.N.content.M`,
 * `input.N.output.M`) body that keepLastBreakpoints leaves out, as `<part>.prompt_cache_breakpoint`.
 */
export function breakpointsLeftOut(
  body: Record<string, unknown>,
  shape: 'openai' | 'openai_responses',
): string[] {
  const list = shape === 'openai' ? body.messages : body.input;
  if (!Array.isArray(list)) return [];
  const paths: string[] = [];
  const key = shape === 'openai' ? 'messages' : 'input';
  list.forEach((item: Record<string, unknown> | null, i) => {
    for (const field of ['content', 'output']) {
      const parts = item?.[field];
      if (!Array.isArray(parts)) continue;
      parts.forEach((p: { text?: unknown; cache_control?: unknown } | null, j) => {
        // a part's own cache_control (OpenRouter's form) is the client's, kept as sent (withBreakpoint)
        if (hasBreakpoint(p) && p?.text !== '' && !p?.cache_control)
          paths.push(`${key}.${i}.${field}.${j}.prompt_cache_breakpoint`);
      });
    }
  });
  return paths.slice(0, Math.max(0, paths.length - MAX_BREAKPOINTS));
}
