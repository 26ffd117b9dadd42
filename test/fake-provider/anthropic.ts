/**
 * The Anthropic Messages wire format for the fake provider (wire-formats §1): request reading, JSON and SSE
 * replies, error bodies.
 */

import { billedInputTokens } from './billing.ts';
import type { Codec, Reply, ReplyBlock, ReplyContext, ReplyUsage, Turn } from './responses.ts';
import { jsonSchemaOf, splitFragments, splitWords } from './responses.ts';
import { sseFrame } from './sse.ts';

const ORGANIZATION_ID = '00000000-0000-4000-8000-00000000fa4e';

const ERRORS: Record<number, [string, string]> = {
  400: ['invalid_request_error', 'Invalid request.'],
  401: ['authentication_error', 'invalid x-api-key'],
  402: ['billing_error', 'Your credit balance is too low to access the Anthropic API.'],
  403: ['permission_error', 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', 'Not found.'],
  408: ['timeout_error', 'Request timed out.'],
  409: ['conflict_error', 'Conflict.'],
  413: ['request_too_large', 'Request exceeds the maximum allowed number of bytes.'],
  429: ['rate_limit_error', 'This request would exceed the rate limit for your organization.'],
  500: ['api_error', 'Internal server error'],
  502: ['api_error', 'Bad gateway'],
  503: ['api_error', 'Service unavailable'],
  504: ['timeout_error', 'Request timed out'],
  529: ['overloaded_error', 'Overloaded'],
};

/** The Anthropic Messages codec (`POST /v1/messages`). */
export const anthropicCodec: Codec = {
  provider: 'anthropic',
  headers: (ctx) => ({ 'request-id': ctx.requestId, 'anthropic-organization-id': ORGANIZATION_ID }),
  messageIdPrefix: 'msg_01Fake',
  toolIdPrefix: 'toolu_01Fake',
  checkHeaders(headers, ctx) {
    // wire-formats §1.1: SDK 0.x sends x-api-key, 1.x sends Authorization: Bearer; both are accepted.
    const bearer = /^Bearer\s+\S+/i.test(headers.get('authorization') ?? '');
    if (!headers.get('x-api-key') && !bearer) {
      return { status: 401, body: anthropicCodec.errorBody(401, 'x-api-key header is required', ctx) };
    }
    if (!headers.get('anthropic-version')) {
      return {
        status: 400,
        body: anthropicCodec.errorBody(400, 'anthropic-version: header is required', ctx),
      };
    }
    return undefined;
  },
  checkBody(body, headers) {
    if (typeof body.model !== 'string') return 'model: Field required';
    if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
    if (!Array.isArray(body.messages)) return 'messages: Field required';
    return translatorRefusal(body) ?? promptTooLong(body, headers);
  },
  readTurn,
  encodeJson(reply, ctx) {
    return {
      id: ctx.id,
      type: 'message',
      role: 'assistant',
      model: ctx.model,
      content: contentOf(reply, ctx).map((block) => {
        if (block.type === 'search') return block.block;
        if (block.type === 'thinking' && block.redacted)
          return { type: 'redacted_thinking', data: block.signature };
        if (block.type === 'thinking')
          return { type: 'thinking', thinking: block.text, signature: block.signature };
        // the real API omits `citations` on a text block without citations (@ai-sdk/anthropic rejects null)
        if (block.type === 'text') return { type: 'text', text: block.text };
        return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
      }),
      stop_reason: reply.stopReason,
      stop_sequence: reply.stopSequence,
      stop_details: stopDetails(reply),
      usage: fullUsage(reply.usage),
      // wire-formats §1.7: always there, null without a code execution container (SDK 1.x Message.container)
      container: null,
    };
  },
  encodeFrames,
  errorBody(status, message, ctx, details) {
    const [type, fallback] = ERRORS[status] ?? ['api_error', 'Error'];
    const text = message ?? (status === 404 ? `model: ${ctx.model}` : fallback);
    // wire-formats §1.11: newer refusals add error.details with a stable error_code
    const error = details ? { type, message: text, details } : { type, message: text };
    return { type: 'error', error, request_id: ctx.requestId };
  },
  // wire-formats §1.11: an exhausted credit balance is 402 billing_error, never a 429
  spendLimit: (message, ctx) => ({ status: 402, body: anthropicCodec.errorBody(402, message, ctx) }),
  malformedFrame(ctx) {
    return `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${ctx.id}\n\n`;
  },
  openTextFrame() {
    return 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"';
  },
  errorFrame(status) {
    const [type, message] = ERRORS[status] ?? ['api_error', 'Error'];
    return sseFrame({ type: 'error', error: { type, message } }, 'error');
  },
  modelsList(models) {
    const data = models.map((id) => ({
      type: 'model',
      id,
      display_name: id,
      created_at: '2026-01-01T00:00:00Z',
    }));
    return { data, has_more: false, first_id: models[0] ?? null, last_id: models.at(-1) ?? null };
  },
};

// --- internal ---

type Obj = Record<string, unknown>;

/**
 * The API's 400s that bite translators (wire-formats §1.4–1.6), so a gateway's translated body the real API
 * would refuse is refused here too: empty text blocks, `tool_use` / `tool_result` pairing between adjacent
 * turns, `tool_use.id` and tool name patterns, thinking budgets, thinking with a forced tool choice or with
 * sampling it does not take, and a tool loop's assistant turn that lost its leading thinking block.
 */
function translatorRefusal(body: Obj): string | undefined {
  const messages = body.messages as { role?: string; content?: unknown }[];
  const blocks = (content: unknown): Obj[] =>
    typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
  if (typeof body.system === 'string' ? false : blocks(body.system).some((b) => b.text === ''))
    return 'system: text content blocks must be non-empty';
  for (const [i, m] of messages.entries()) {
    const content = blocks(m.content);
    if (content.some((b) => b.type === 'text' && b.text === ''))
      return `messages.${i}: text content blocks must be non-empty`;
    const uses = content.filter((b) => b.type === 'tool_use');
    for (const u of uses)
      if (typeof u.id !== 'string' || !/^[a-zA-Z0-9_-]+$/.test(u.id))
        return `messages.${i}.content: tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
    const next = i + 1 < messages.length ? blocks(messages[i + 1].content) : undefined;
    const answered = new Set(next?.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
    const unanswered = next === undefined ? [] : uses.filter((u) => !answered.has(u.id));
    if (m.role === 'assistant' && unanswered.length > 0)
      return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.map((u) => u.id).join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    const previous = new Set(
      i > 0
        ? blocks(messages[i - 1].content)
            .filter((b) => b.type === 'tool_use')
            .map((b) => b.id)
        : [],
    );
    const orphan = content.find((b) => b.type === 'tool_result' && !previous.has(b.tool_use_id));
    if (orphan)
      return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(orphan.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
  }
  const tools = Array.isArray(body.tools) ? (body.tools as Obj[]) : [];
  for (const [i, t] of tools.entries())
    if (t.type === undefined && (typeof t.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(t.name)))
      return `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`;
  const thinking = (body.thinking ?? {}) as { type?: string; budget_tokens?: number };
  if (thinking.type !== 'enabled' && thinking.type !== 'adaptive') return undefined;
  if (thinking.type === 'enabled') {
    const budget = Number(thinking.budget_tokens);
    if (!(budget >= 1024))
      return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (budget >= Number(body.max_tokens))
      return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
  }
  const choice = (body.tool_choice ?? {}) as { type?: string };
  if (choice.type === 'any' || choice.type === 'tool')
    return 'Thinking may not be enabled when `tool_choice` forces tool use.';
  if (body.temperature !== undefined && body.temperature !== 1)
    return '`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
  if (body.top_k !== undefined) return '`top_k` must be unset when thinking is enabled.';
  if (typeof body.top_p === 'number' && body.top_p < 0.95)
    return '`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled.';
  // the tool loop in progress: the last assistant turn, answered by tool results, starts with thinking
  const last = messages.findLastIndex((m) => m.role === 'assistant');
  const lastBlocks = last >= 0 ? blocks(messages[last].content) : [];
  const answeredLoop =
    last >= 0 &&
    last === messages.length - 2 &&
    lastBlocks.some((b) => b.type === 'tool_use') &&
    blocks(messages[last + 1].content).some((b) => b.type === 'tool_result');
  const head = lastBlocks[0]?.type;
  if (answeredLoop && head !== 'thinking' && head !== 'redacted_thinking')
    return `messages.${last}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(head)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`;
  return undefined;
}

/** The 1M-token window's beta, and the models that take it (Claude Sonnet 4, 4.5, 4.6 and Opus 4.6). */
const CONTEXT_1M_BETA = 'context-1m-2025-08-07';
const CONTEXT_1M_MODELS = /^claude-(sonnet-4(-5|-6)?|opus-4-6)(-\d{8})?$/;

/**
 * A prompt over the model's window: 200,000 tokens, or 1,000,000 on a model that takes the 1M beta when the
 * request's anthropic-beta names it (the API's message: `prompt is too long: N tokens > 200000 maximum`).
 */
function promptTooLong(body: Obj, headers: Headers | undefined): string | undefined {
  const betas = (headers?.get('anthropic-beta') ?? '').split(',').map((b) => b.trim());
  const wide = betas.includes(CONTEXT_1M_BETA) && CONTEXT_1M_MODELS.test(String(body.model));
  const maximum = wide ? 1_000_000 : 200_000;
  const tokens = billedInputTokens('anthropic', body);
  return tokens > maximum ? `prompt is too long: ${tokens} tokens > ${maximum} maximum` : undefined;
}

function readTurn(body: Record<string, unknown>): Turn {
  const messages = body.messages as { role?: string; content?: unknown }[];
  const lastAssistant = messages.findLastIndex((m) => m.role === 'assistant');
  const texts: string[] = [];
  const toolResults: string[] = [];
  for (const message of messages.slice(lastAssistant + 1)) {
    if (message.role !== 'user') continue;
    for (const block of blocksOf(message.content)) {
      if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
      if (block.type === 'tool_result') {
        const text = blocksOf(block.content)
          .filter((b) => b.type === 'text')
          .map((b) => b.text)
          .join('');
        toolResults.push(text);
        texts.push(text);
      }
    }
  }
  const choice = (body.tool_choice ?? {}) as {
    type?: string;
    name?: string;
    disable_parallel_tool_use?: boolean;
  };
  const thinking = (body.thinking ?? {}) as { type?: string; display?: string };
  const tools = Array.isArray(body.tools)
    ? (body.tools as { type?: string; name?: string; input_schema?: unknown }[])
    : [];
  return {
    model: body.model as string,
    stream: body.stream === true,
    includeUsage: true,
    turnText: texts.join('\n'),
    tools: tools
      .filter((t) => typeof t.name === 'string' && !isWebSearchTool(t))
      .map((t) => ({ name: t.name!, schema: t.input_schema })),
    webSearchTool: tools.some(isWebSearchTool),
    toolResults,
    images: messages.flatMap((m) => imagesIn(m.content)),
    forcedTool: choice.type === 'any' ? true : choice.type === 'tool' ? choice.name : undefined,
    toolChoiceNone: choice.type === 'none',
    singleToolCall: choice.disable_parallel_tool_use === true,
    noTextBeforeForcedCall: true,
    thinkingRequested: thinking.type === 'enabled' || thinking.type === 'adaptive',
    thinkingOmitted: thinking.display === 'omitted',
    inputTokens: billedInputTokens('anthropic', body),
    // output_format: the structured-outputs beta's field before output_config
    outputSchema: jsonSchemaOf(
      (body.output_config as { format?: unknown } | undefined)?.format ?? body.output_format,
    ),
  };
}

type Block = {
  type?: string;
  text?: string;
  content?: unknown;
  source?: { type?: string; media_type?: string };
};

function blocksOf(content: unknown): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Block[]) : [];
}

function imagesIn(content: unknown): string[] {
  return blocksOf(content).flatMap((block) => {
    if (block.type === 'image') {
      const source = block.source ?? {};
      return [source.type === 'base64' ? (source.media_type ?? 'base64') : (source.type ?? 'unknown')];
    }
    return block.type === 'tool_result' ? imagesIn(block.content) : [];
  });
}

/** wire-formats §1.7: null, or for a refusal `{type:"refusal", category, explanation}`. */
function stopDetails(reply: Reply): Record<string, unknown> | null {
  if (reply.stopReason !== 'refusal') return null;
  return { type: 'refusal', category: null, explanation: 'The request was declined.' };
}

function fullUsage(usage: ReplyUsage): Record<string, unknown> {
  return {
    input_tokens: usage.input,
    cache_creation_input_tokens: usage.cacheWrite,
    cache_read_input_tokens: usage.cacheRead,
    cache_creation: {
      ephemeral_5m_input_tokens: usage.cacheWrite - usage.cacheWrite1h,
      ephemeral_1h_input_tokens: usage.cacheWrite1h,
    },
    output_tokens: usage.output,
    ...(usage.reasoning > 0 ? { output_tokens_details: { thinking_tokens: usage.reasoning } } : {}),
    ...serverToolUse(usage),
    service_tier: 'standard',
  };
}

/** wire-formats §1.8: `server_tool_use` counts the server tools the call ran, when it ran any. */
function serverToolUse(usage: ReplyUsage): Record<string, unknown> {
  return usage.webSearches > 0
    ? { server_tool_use: { web_search_requests: usage.webSearches, web_fetch_requests: 0 } }
    : {};
}

/** The API's own web search tool (`web_search_20250305`…): the API runs it, the model never calls it as tool_use. */
function isWebSearchTool(tool: { type?: string }): boolean {
  return typeof tool.type === 'string' && /^web_search_\d+$/.test(tool.type);
}

type SearchBlock = { type: 'search'; block: Record<string, unknown> };

/** SDK 1.x: a server tool block names who called it; `direct` is the model itself. */
const DIRECT = { type: 'direct' };

/**
 * The reply's content blocks with its web searches after any thinking: each a `server_tool_use` call and its
 * `web_search_tool_result`, as the API places them before the answer that cites them.
 */
function contentOf(reply: Reply, ctx: ReplyContext): Array<ReplyBlock | SearchBlock> {
  const thinking = reply.blocks.findLastIndex((b) => b.type === 'thinking') + 1;
  const searches = reply.searches.flatMap((search, i): SearchBlock[] => {
    const id = `srvtoolu_01Fake${ctx.id.slice('msg_01Fake'.length)}${i}`;
    return [
      {
        type: 'search',
        block: {
          type: 'server_tool_use',
          id,
          name: 'web_search',
          input: { query: search.query },
          caller: DIRECT,
        },
      },
      {
        type: 'search',
        block: {
          type: 'web_search_tool_result',
          tool_use_id: id,
          caller: DIRECT,
          content: [
            {
              type: 'web_search_result',
              title: `Result for ${search.query}`,
              url: `https://example.com/search/${i + 1}`,
              encrypted_content: `EqgfFake${i}`,
              page_age: null,
            },
          ],
        },
      },
    ];
  });
  return [...reply.blocks.slice(0, thinking), ...searches, ...reply.blocks.slice(thinking)];
}

/** message_start's usage: the input and cache counts of the whole call, output not counted yet. */
function startUsage(usage: ReplyUsage): Record<string, unknown> {
  const { output_tokens_details: _, ...start } = fullUsage(usage);
  return { ...start, output_tokens: 1 };
}

function encodeFrames(reply: Reply, ctx: ReplyContext): string[] {
  const frames: string[] = [];
  const event = (type: string, data: Record<string, unknown>) =>
    frames.push(sseFrame({ type, ...data }, type));
  const usage = reply.usage;
  event('message_start', {
    message: {
      id: ctx.id,
      type: 'message',
      role: 'assistant',
      model: ctx.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      // the whole usage object, with a small output count (wire-formats §1.10)
      usage: startUsage(usage),
      container: null,
    },
  });
  contentOf(reply, ctx).forEach((block, index) => {
    const delta = (d: Record<string, unknown>) => event('content_block_delta', { index, delta: d });
    // the real API's ping comes right after the first content_block_start (wire-formats §1.10)
    const start = (content_block: Record<string, unknown>) => {
      event('content_block_start', { index, content_block });
      if (index === 0) event('ping', {});
    };
    if (block.type === 'search' && block.block.type === 'server_tool_use') {
      // a server tool call streams its input like tool_use (wire-formats §1.10)
      start({ ...block.block, input: {} });
      delta({ type: 'input_json_delta', partial_json: JSON.stringify(block.block.input) });
    } else if (block.type === 'search') {
      start(block.block); // server tool results arrive complete
    } else if (block.type === 'thinking' && block.redacted) {
      start({ type: 'redacted_thinking', data: block.signature }); // complete, no deltas (wire-formats §1.10)
    } else if (block.type === 'thinking') {
      start({ type: 'thinking', thinking: '' });
      for (const piece of block.text === '' ? [] : splitWords(block.text)) {
        delta({ type: 'thinking_delta', thinking: piece });
      }
      delta({ type: 'signature_delta', signature: block.signature });
    } else if (block.type === 'text') {
      start({ type: 'text', text: '' });
      for (const piece of splitWords(block.text)) delta({ type: 'text_delta', text: piece });
    } else {
      start({ type: 'tool_use', id: block.id, name: block.name, input: {} });
      delta({ type: 'input_json_delta', partial_json: '' });
      for (const piece of splitFragments(JSON.stringify(block.input))) {
        delta({ type: 'input_json_delta', partial_json: piece });
      }
    }
    event('content_block_stop', { index });
  });
  event('message_delta', {
    // the SDK's accumulator copies stop_details from here into finalMessage()
    delta: {
      stop_reason: reply.stopReason,
      stop_sequence: reply.stopSequence,
      stop_details: stopDetails(reply),
    },
    usage: {
      output_tokens: usage.output,
      ...(usage.reasoning > 0 ? { output_tokens_details: { thinking_tokens: usage.reasoning } } : {}),
      ...serverToolUse(usage),
    },
  });
  event('message_stop', {});
  return frames;
}
