/**
 * Chat Completions replies (wire-formats §2.5–2.7, OpenRouter deltas §3): the JSON body and the SSE chunk
 * sequence, including tool-call fragments, the usage chunk and `[DONE]`.
 */

import { openRouterReasoning } from './reasoning-seals.ts';
import type { Reply, ReplyBlock, ReplyContext, ReplyUsage } from './responses.ts';
import { splitFragments, splitWords } from './responses.ts';
import { sseFrame } from './sse.ts';

const FINISH: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/** The non-streaming `chat.completion` body. */
export function encodeChatJson(reply: Reply, ctx: ReplyContext, openrouter: boolean): unknown {
  const text = textOf(reply.blocks);
  const calls = callsOf(reply.blocks).map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.input) },
  }));
  const thinking = reply.blocks.flatMap((b) => (b.type === 'thinking' ? [b] : []));
  // OpenAI's model declines in `refusal`, with no content (wire-formats §5.1 Refusal)
  const refused = refuses(reply, openrouter);
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: refused ? null : text,
    refusal: refused ? text : null,
  };
  if (openrouter) {
    const readable = thinking.find((b) => !b.redacted);
    message.reasoning = readable?.text ?? null;
    if (thinking.length > 0)
      message.reasoning_details = thinking.map((b, index) =>
        b.redacted
          ? encryptedDetail(ctx.model, b.signature, index)
          : reasoningDetail(ctx.model, { text: b.text, signature: b.signature }, index),
      );
  } else {
    message.annotations = [];
  }
  if (calls.length > 0) message.tool_calls = calls;
  const choice: Record<string, unknown> = {
    index: 0,
    message,
    logprobs: null,
    finish_reason: finishOf(reply, openrouter),
  };
  if (openrouter) choice.native_finish_reason = reply.stopReason;
  return {
    ...head(ctx, openrouter, 'chat.completion', reply),
    // `n` choices, each the same reply (wire-formats §2.2)
    choices: Array.from({ length: choiceCount(ctx) }, (_, index) => ({ ...choice, index })),
    usage: usageOf(reply.usage, openrouter),
  };
}

/** The streaming chunks, ending with `data: [DONE]`. */
export function encodeChatFrames(reply: Reply, ctx: ReplyContext, openrouter: boolean): string[] {
  const frames: string[] = openrouter ? [': OPENROUTER PROCESSING\n\n'] : [];
  const usageNull = ctx.includeUsage && !openrouter ? { usage: null } : {};
  const obfuscated = !openrouter && obfuscates(ctx);
  // With `n` > 1 each chunk carries one choice; the choices' chunks come interleaved, one of each in turn
  const n = choiceCount(ctx);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => {
    for (let index = 0; index < n; index++) choiceChunk(index, delta, finish);
  };
  const choiceChunk = (index: number, delta: Record<string, unknown>, finish: string | null) => {
    const choice: Record<string, unknown> = { index, delta, logprobs: null, finish_reason: finish };
    if (openrouter) choice.native_finish_reason = finish === null ? null : reply.stopReason;
    const padding = obfuscated ? { obfuscation: obfuscationFor(JSON.stringify(delta)) } : {};
    frames.push(
      sseFrame({
        ...head(ctx, openrouter, 'chat.completion.chunk', reply),
        choices: [choice],
        ...usageNull,
        ...padding,
      }),
    );
  };
  // OpenAI opens an answer that starts with a tool call with the role, content null and that call in one chunk;
  // any other answer (and every OpenRouter one) with a chunk of the role and an empty content
  // (OpenAI streams no reasoning text: a thinking block shows nothing)
  const opensWithCall = !openrouter && reply.blocks.find((b) => b.type !== 'thinking')?.type === 'tool_call';
  let opening: Record<string, unknown> | null = opensWithCall ? { role: 'assistant', content: null } : null;
  if (!opensWithCall) chunk({ role: 'assistant', content: '', refusal: null });
  const textField = refuses(reply, openrouter) ? 'refusal' : 'content';
  let callIndex = 0;
  let detailIndex = 0; // a reasoning detail's place in the message's reasoning_details, as its deltas say
  for (const block of reply.blocks) {
    if (block.type === 'thinking') {
      if (!openrouter) continue; // OpenAI returns no reasoning text, only reasoning_tokens.
      const index = detailIndex++;
      if (block.redacted) {
        chunk({ content: '', reasoning_details: [encryptedDetail(ctx.model, block.signature, index)] });
        continue;
      }
      for (const piece of splitWords(block.text)) {
        chunk({
          content: '',
          reasoning: piece,
          reasoning_details: [reasoningDetail(ctx.model, { text: piece }, index)],
        });
      }
      chunk({
        content: '',
        reasoning: '',
        reasoning_details: [reasoningDetail(ctx.model, { signature: block.signature }, index)],
      });
    } else if (block.type === 'text') {
      for (const piece of splitWords(block.text)) chunk({ [textField]: piece });
    } else {
      const index = callIndex++;
      // wire-formats §2.7: id, type and name only on the first fragment; later ones carry index + arguments.
      chunk({
        ...opening,
        tool_calls: [
          { index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } },
        ],
        ...(opening ? { refusal: null } : {}),
      });
      opening = null;
      for (const piece of splitFragments(JSON.stringify(block.input))) {
        chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
      }
    }
  }
  chunk({}, finishOf(reply, openrouter));
  if (ctx.includeUsage) {
    const usage = usageOf(reply.usage, openrouter);
    // OpenRouter's last chunk carries an empty delta choice next to the usage (wire-formats §3).
    const choices = openrouter
      ? [
          {
            index: 0,
            delta: { role: 'assistant', content: '' },
            finish_reason: null,
            native_finish_reason: null,
            logprobs: null,
          },
        ]
      : [];
    frames.push(sseFrame({ ...head(ctx, openrouter, 'chat.completion.chunk', reply), choices, usage }));
  }
  frames.push('data: [DONE]\n\n');
  return frames;
}

/**
 * OpenAI pads every streamed delta with an `obfuscation` string of random characters unless the request's
 * `stream_options.include_obfuscation` is false (wire-formats §2.7; the Responses API's delta events alike).
 */
export function obfuscates(ctx: ReplyContext): boolean {
  const options = (ctx.body?.stream_options ?? {}) as { include_obfuscation?: unknown };
  return options.include_obfuscation !== false;
}

/** The padding for a delta: characters that even out the payload's length (deterministic here). */
export function obfuscationFor(payload: string): string {
  return 'Xq7fZk2PmA9wLr4T'.slice(0, 1 + (payload.length % 16));
}

// --- internal ---

/** The request's `n` (choices to generate), 1 when absent. */
function choiceCount(ctx: ReplyContext): number {
  const n = ctx.body?.n;
  return typeof n === 'number' && Number.isInteger(n) && n > 1 ? n : 1;
}

function head(ctx: ReplyContext, openrouter: boolean, object: string, reply: Reply): Record<string, unknown> {
  if (openrouter)
    return { id: ctx.id, provider: 'FakeProvider', model: ctx.model, object, created: ctx.created };
  return {
    id: ctx.id,
    object,
    created: ctx.created,
    model: ctx.model,
    service_tier: servedTier(ctx, reply),
    system_fingerprint: 'fp_fake',
  };
}

/**
 * The `service_tier` OpenAI's answer (a chat.completion, each chunk, a Responses `response`) says the request
 * ran at: the paid tier it asked for (`priority`, `flex`), else `default` (for `auto`, `default` or none), or
 * with the priority-tier directive (a project whose default tier is priority) `priority` for `auto`, null or none.
 */
export function servedTier(ctx: ReplyContext, reply: Reply | undefined): string {
  const asked = ctx.body?.service_tier;
  if (asked === 'priority' || asked === 'flex') return asked;
  // null is "not set" in OpenAI's API, as absent: the project's default tier
  return reply?.usage.priorityTier && (asked == null || asked === 'auto') ? 'priority' : 'default';
}

function finishOf(reply: Reply, openrouter: boolean): string {
  if (callsOf(reply.blocks).length > 0) return 'tool_calls';
  if (refuses(reply, openrouter)) return 'stop';
  return FINISH[reply.stopReason] ?? 'stop';
}

/**
 * A refusal (the `stop=refusal` directive) from OpenAI's own API is its model declining: the text is the
 * message's `refusal` (streamed as `delta.refusal`) and the finish reason `stop`, as the API answers a
 * request it will not serve (its structured outputs' documented refusal); the OpenRouter flavour keeps the
 * text as content with `content_filter`.
 */
function refuses(reply: Reply, openrouter: boolean): boolean {
  return !openrouter && reply.stopReason === 'refusal' && callsOf(reply.blocks).length === 0;
}

function textOf(blocks: ReplyBlock[]): string | null {
  const texts = blocks.flatMap((b) => (b.type === 'text' ? [b.text] : []));
  return texts.length > 0 ? texts.join('') : null;
}

function callsOf(blocks: ReplyBlock[]) {
  return blocks.flatMap((b) => (b.type === 'tool_call' ? [b] : []));
}

/** A reasoning.text detail labelled and sealed by the model's family (reasoning-seals.ts). */
function reasoningDetail(
  model: string,
  fields: { text?: string; signature?: string },
  index = 0,
): Record<string, unknown> {
  const { text, signature } = fields;
  const { format, seal } = openRouterReasoning(model, signature ?? '');
  const signed = signature !== undefined && seal !== undefined ? { signature: seal } : {};
  return { type: 'reasoning.text', ...(text !== undefined ? { text } : {}), ...signed, format, index };
}

/** OpenRouter's form of redacted (encrypted) reasoning (wire-formats §5.2), labelled by the model's family. */
function encryptedDetail(model: string, data: string, index = 0): Record<string, unknown> {
  const { format, seal } = openRouterReasoning(model, data);
  return { type: 'reasoning.encrypted', data: seal ?? data, format, index };
}

function usageOf(usage: ReplyUsage, openrouter: boolean): Record<string, unknown> {
  const prompt = usage.input + usage.cacheRead + usage.cacheWrite;
  const base = {
    prompt_tokens: prompt,
    completion_tokens: usage.output,
    total_tokens: prompt + usage.output,
  };
  if (openrouter) {
    return {
      ...base,
      cost: usage.cost,
      is_byok: false,
      prompt_tokens_details: {
        cached_tokens: usage.cacheRead,
        cache_write_tokens: usage.cacheWrite,
        audio_tokens: 0,
      },
      cost_details: {
        upstream_inference_cost: null,
        upstream_inference_prompt_cost: 0,
        upstream_inference_completions_cost: 0,
      },
      completion_tokens_details: { reasoning_tokens: usage.reasoning, image_tokens: 0 },
    };
  }
  return {
    ...base,
    prompt_tokens_details: {
      cached_tokens: usage.cacheRead,
      audio_tokens: 0,
      ...(usage.cacheWrite > 0 ? { cache_write_tokens: usage.cacheWrite } : {}),
    },
    completion_tokens_details: {
      reasoning_tokens: usage.reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}
