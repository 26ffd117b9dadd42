/**
 * The Anthropic Messages wire format for the fake provider (wire-formats §1): request reading, JSON and SSE
 * replies, error bodies.
 */

import { promptTooLong, translatorRefusal, versionRefusal } from './anthropic-refusals.ts';
import { billedInputTokens } from './billing.ts';
import { structuredSchemaRefusal } from './claude-schema-refusal.ts';
import { cacheBreakpointRefusal } from './prompt-cache.ts';
import { claudeSignatureRefusal } from './reasoning-seals.ts';
import type { Codec, Reply, ReplyBlock, ReplyContext, ReplyUsage, Turn } from './responses.ts';
import { jsonSchemaOf, splitFragments, splitWords, stringsOf } from './responses.ts';
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
    return (
      versionRefusal(body, headers) ??
      stopRefusal(body) ??
      structuredSchemaRefusal(body) ??
      translatorRefusal(body) ??
      cacheBreakpointRefusal(body) ??
      claudeSignatureRefusal(body) ??
      promptTooLong(body, headers)
    );
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
        if (block.type === 'text')
          return block.citations
            ? { type: 'text', text: block.text, citations: block.citations }
            : { type: 'text', text: block.text };
        return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
      }),
      stop_reason: reply.stopReason,
      stop_sequence: reply.stopSequence,
      stop_details: stopDetails(reply),
      usage: fullUsage(reply.usage, ctx),
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
  errorFrame(status, _ctx, _sequence, message) {
    const [type, fallback] = ERRORS[status] ?? ['api_error', 'Error'];
    return sseFrame({ type: 'error', error: { type, message: message ?? fallback } }, 'error');
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
  // forcing the API's own search tool makes the model search, not call a tool of the client's
  const searchForced =
    choice.type === 'tool' && tools.some((t) => isWebSearchTool(t) && t.name === choice.name);
  return {
    model: body.model as string,
    stream: body.stream === true,
    includeUsage: true,
    turnText: texts.join('\n'),
    tools: tools
      .filter((t) => typeof t.name === 'string' && !isWebSearchTool(t))
      .map((t) => ({ name: t.name!, schema: t.input_schema })),
    webSearchTool: tools.some(isWebSearchTool),
    webSearchForced: searchForced,
    toolResults,
    images: messages.flatMap((m) => imagesIn(m.content)),
    forcedTool:
      choice.type === 'any' ? true : choice.type === 'tool' && !searchForced ? choice.name : undefined,
    toolChoiceNone: choice.type === 'none',
    singleToolCall: choice.disable_parallel_tool_use === true,
    noTextBeforeForcedCall: true,
    stopSequences: stringsOf(body.stop_sequences),
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

function fullUsage(usage: ReplyUsage, ctx: ReplyContext): Record<string, unknown> {
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
    // Priority Tier (/docs/en/api/service-tiers): `auto`, the default, runs on the account's priority capacity
    service_tier: usage.priorityTier && ctx.body?.service_tier !== 'standard_only' ? 'priority' : 'standard',
    // fast mode (`speed: "fast"`, a research preview) is billed at its own rates: the usage says which speed ran
    ...(typeof ctx.body?.speed === 'string'
      ? { speed: ctx.body.speed === 'fast' ? 'fast' : 'standard' }
      : {}),
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
function startUsage(usage: ReplyUsage, ctx: ReplyContext): Record<string, unknown> {
  const { output_tokens_details: _, ...start } = fullUsage(usage, ctx);
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
      usage: startUsage(usage, ctx),
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
      // a cited block's sources come first, its text after (wire-formats §1.10 citations_delta)
      for (const citation of block.citations ?? []) delta({ type: 'citations_delta', citation });
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

/** The API refuses an empty or whitespace-only stop sequence (a translator passing OpenAI's "\n" on). */
function stopRefusal(body: Record<string, unknown>): string | undefined {
  const stops = Array.isArray(body.stop_sequences) ? body.stop_sequences : [];
  if (stops.some((stop) => stop === '')) return 'stop_sequences: each stop sequence must be non-empty';
  if (stops.some((stop) => typeof stop === 'string' && stop.trim() === ''))
    return 'stop_sequences: each stop sequence must contain non-whitespace';
  return undefined;
}
