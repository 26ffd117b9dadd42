/**
 * The input tokens the fake bills for a request, close to what the real APIs bill: text through an
 * approximate tokenizer (about 4 ASCII characters per token, 1.5 tokens per CJK character, 2 per emoji,
 * as o200k and Claude's tokenizer come out on such text), images by the provider's documented formula
 * from the image's own dimensions, a few tokens of framing per message, and Anthropic's tool-use system
 * prompt when tools are offered. Used as the default `usage` input count and by count_tokens.
 */

export type BillingWire = 'anthropic' | 'openai' | 'openai_responses';

/** Approximate token count of one text (never more than its UTF-8 bytes, like any real tokenizer). */
export function approxTokens(text: string): number {
  // plain ASCII (a long prompt, most often) without a walk over its characters
  if (Buffer.byteLength(text) === text.length) return Math.ceil(text.length / 4);
  let ascii = 0;
  let weighted = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80) ascii++;
    else if (isCjk(cp)) weighted += 1.5;
    else if (cp > 0xffff) weighted += 2;
    else weighted += 1;
  }
  return Math.ceil(ascii / 4 + weighted);
}

/** Tokens of one image: Anthropic (w·h)/750 after the 1568 px / ~1.15 MP downscale; OpenAI 85 + 170 per tile. */
export function imageTokens(
  wire: BillingWire,
  model: string,
  base64: string | undefined,
  detail?: string,
): number {
  const size = base64 === undefined ? undefined : imageSize(base64);
  if (wire === 'anthropic') {
    if (!size) return 1_600; // a URL image: the fake cannot see it, bill the usual cap
    const scale = Math.min(1, 1568 / Math.max(size.w, size.h), Math.sqrt(1_150_000 / (size.w * size.h)));
    return Math.max(1, Math.ceil((size.w * scale * size.h * scale) / 750));
  }
  // wire-formats §2 / OpenAI vision docs: gpt-4o-mini bills 2,833 + 5,667 per tile, the rest 85 + 170
  const [base, tile] = model.includes('4o-mini') ? [2_833, 5_667] : [85, 170];
  if (detail === 'low') return base;
  if (!size) return base + 4 * tile; // a URL image: a 1024×1024 picture
  const fit = Math.min(1, 2048 / Math.max(size.w, size.h));
  const short = Math.min(size.w, size.h) * fit;
  const scale = fit * Math.min(1, 768 / short);
  const tiles = Math.ceil((size.w * scale) / 512) * Math.ceil((size.h * scale) / 512);
  return base + tile * tiles;
}

/** Input tokens for a request body of either wire. */
export function billedInputTokens(wire: BillingWire, body: Record<string, unknown>): number {
  if (wire === 'openai_responses') return Math.max(1, responsesTokens(body));
  return Math.max(1, wire === 'anthropic' ? anthropicTokens(body) : openaiTokens(body));
}

// --- internal ---

const MESSAGE_FRAMING = 3; // OpenAI's documented 3 tokens per message (and 3 to prime the reply)
const ANTHROPIC_TOOLS_PROMPT = 346; // Anthropic's tool-use system prompt for Claude 4 models (tool_choice auto)

type Obj = Record<string, unknown>;

function anthropicTokens(body: Obj): number {
  const model = String(body.model ?? '');
  let n = MESSAGE_FRAMING + anthropicContent(body.system, model);
  for (const m of (body.messages ?? []) as Obj[]) n += MESSAGE_FRAMING + anthropicContent(m.content, model);
  const tools = Array.isArray(body.tools) ? (body.tools as Obj[]) : [];
  if (tools.length > 0) n += ANTHROPIC_TOOLS_PROMPT;
  for (const t of tools) n += approxTokens(JSON.stringify(t));
  return n;
}

function anthropicContent(content: unknown, model: string): number {
  if (typeof content === 'string') return approxTokens(content);
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const b of content as Obj[]) {
    if (b.type === 'text') n += approxTokens(String(b.text ?? ''));
    else if (b.type === 'image') {
      const source = (b.source ?? {}) as Obj;
      n += imageTokens('anthropic', model, source.type === 'base64' ? String(source.data) : undefined);
    } else if (b.type === 'tool_use') n += approxTokens(`${b.name}${JSON.stringify(b.input ?? {})}`);
    else if (b.type === 'tool_result') n += anthropicContent(b.content, model);
    else if (b.type === 'thinking') n += approxTokens(String(b.thinking ?? ''));
    else if (b.type !== 'redacted_thinking') n += approxTokens(JSON.stringify(b));
  }
  return n;
}

function openaiTokens(body: Obj): number {
  const model = String(body.model ?? '');
  let n = MESSAGE_FRAMING;
  for (const m of (body.messages ?? []) as Obj[]) {
    n += MESSAGE_FRAMING + openaiContent(m.content, model);
    for (const call of (m.tool_calls ?? []) as Array<{ function?: Obj }>)
      n += approxTokens(`${call.function?.name ?? ''}${call.function?.arguments ?? ''}`);
  }
  for (const t of (body.tools ?? []) as Obj[]) n += approxTokens(JSON.stringify(t.function ?? t));
  return n;
}

function openaiContent(content: unknown, model: string): number {
  if (typeof content === 'string') return approxTokens(content);
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const p of content as Obj[]) {
    if (p.type === 'text') n += approxTokens(String(p.text ?? ''));
    else if (p.type === 'image_url') {
      const image = (p.image_url ?? {}) as { url?: string; detail?: string };
      const data = /^data:[^,]*;base64,/.exec(image.url ?? '');
      const base64 = data ? (image.url ?? '').slice(data[0].length) : undefined;
      n += imageTokens('openai', model, base64, image.detail);
    } else n += approxTokens(JSON.stringify(p));
  }
  return n;
}

/** Responses API: `instructions`, then each input item (messages, calls, call outputs) and the tools. */
function responsesTokens(body: Obj): number {
  const model = String(body.model ?? '');
  let n = MESSAGE_FRAMING;
  if (typeof body.instructions === 'string') n += MESSAGE_FRAMING + approxTokens(body.instructions);
  const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  for (const item of (Array.isArray(input) ? input : []) as Obj[]) {
    if (item.type === 'function_call') n += approxTokens(`${item.name ?? ''}${item.arguments ?? ''}`);
    else if (item.type === 'function_call_output')
      n += MESSAGE_FRAMING + responsesContent(item.output, model);
    else if (item.type === 'custom_tool_call') n += approxTokens(`${item.name ?? ''}${item.input ?? ''}`);
    else if (/_call_output$/.test(String(item.type)))
      n += MESSAGE_FRAMING + responsesContent(item.output, model);
    // a call of a tool the client runs (shell_call, apply_patch_call, …): its action or operation
    else if (/_call$/.test(String(item.type)))
      n += approxTokens(JSON.stringify(item.action ?? item.operation ?? item.actions ?? {}));
    else if (item.type === 'reasoning') continue;
    // Codex's tools for its default model: a developer input item listing them, billed like `tools`
    else if (item.type === 'additional_tools') n += approxTokens(JSON.stringify(item.tools ?? []));
    else n += MESSAGE_FRAMING + responsesContent(item.content, model);
  }
  for (const t of (body.tools ?? []) as Obj[]) n += approxTokens(JSON.stringify(t));
  return n;
}

function responsesContent(content: unknown, model: string): number {
  if (typeof content === 'string') return approxTokens(content);
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const p of content as Obj[]) {
    if (typeof p.text === 'string') n += approxTokens(p.text);
    else if (p.type === 'input_image') {
      const url = typeof p.image_url === 'string' ? p.image_url : '';
      const data = /^data:[^,]*;base64,/.exec(url);
      n += imageTokens('openai', model, data ? url.slice(data[0].length) : undefined, p.detail as string);
    } else n += approxTokens(JSON.stringify(p));
  }
  return n;
}

function isCjk(cp: number): boolean {
  return (
    (cp >= 0x3040 && cp <= 0x30ff) || // kana
    (cp >= 0x3400 && cp <= 0x9fff) || // CJK ideographs
    (cp >= 0xac00 && cp <= 0xd7af) || // Hangul
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x20000 && cp <= 0x3ffff)
  );
}

/** Pixel size from a PNG, GIF or JPEG header; undefined for anything else. */
function imageSize(base64: string): { w: number; h: number } | undefined {
  const head = Buffer.from(base64.slice(0, 64 * 1024), 'base64');
  const size = headerSize(head);
  return size && size.w > 0 && size.h > 0 ? size : undefined;
}

function headerSize(head: Buffer): { w: number; h: number } | undefined {
  if (head.length >= 24 && head.readUInt32BE(0) === 0x89504e47)
    return { w: head.readUInt32BE(16), h: head.readUInt32BE(20) };
  if (head.length >= 10 && head.toString('latin1', 0, 3) === 'GIF')
    return { w: head.readUInt16LE(6), h: head.readUInt16LE(8) };
  if (head[0] !== 0xff || head[1] !== 0xd8) return undefined;
  for (let i = 2; i + 9 < head.length; ) {
    if (head[i] !== 0xff) return undefined;
    const marker = head[i + 1];
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return { h: head.readUInt16BE(i + 5), w: head.readUInt16BE(i + 7) };
    i += 2 + head.readUInt16BE(i + 2);
  }
  return undefined;
}
