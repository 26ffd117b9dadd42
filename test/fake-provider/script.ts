/**
 * Reply scripts for the fake provider: the `FakeStep` type, the `[[fake:…]]` directive grammar, and the rule
 * that merges a queued step with the directives found in the request.
 *
 * Grammar (also accepted as a string step by `fake.script([...])`, without the brackets):
 *
 *   directive := "[[fake:" item (";" item)* "]]"        several directives in one text combine, later wins
 *   item      := key | key "=" value                   keys are case-insensitive; "_" and "-" are the same
 *
 *   reply shape
 *     text=STRING          reply text (STRING may contain spaces, not ";" or "]]"); before any tool call, but
 *                          left out on Anthropic when tool_choice forces the call (the API prefills the turn)
 *     long=BYTES           reply text of BYTES bytes, in 1 KiB words (a stream: one frame each), for a long answer
 *     tool_call            call the first request tool (input built from its schema's required properties; a
 *                          Responses custom tool gets a custom_tool_call whose input is the text "<name> input";
 *                          a Responses namespace's members and the tools of an additional_tools input item are
 *                          request tools too, a member's call naming its namespace)
 *     tool_calls=N         N parallel calls (cycling through the request tools); one at most when the request
 *                          turns parallel calls off (disable_parallel_tool_use, parallel_tool_calls: false)
 *     thinking[=STRING]    a thinking block (Anthropic), reasoning (OpenRouter), reasoning_tokens (OpenAI)
 *     redacted-thinking    a redacted thinking block first, opaque data only (Anthropic redacted_thinking,
 *                          OpenRouter reasoning.encrypted, a Responses reasoning item with no summary)
 *     usage=in:N,out:N,cache_read:N,cache_write:N,cache_write_1h:N,reasoning:N,cost:X   any subset; in =
 *                          uncached input; cache_write_1h = the part of cache_write with a one-hour lifetime
 *     web-search=N         the model runs N server-side web searches first, when the request offers the server
 *                          tool (Anthropic `web_search_2025…` tools, Responses `web_search*`; without it the
 *                          model cannot search and the item does nothing): Anthropic server_tool_use +
 *                          web_search_tool_result blocks and usage.server_tool_use.web_search_requests N,
 *                          Responses N `web_search_call` output items (with their streaming events)
 *     image-check          reply says whether image blocks/parts arrived: "image-check: 1 image (image/png)"
 *     cite                 Anthropic: the answer ends with a text block citing a web page, as an answer after a
 *                          web search does (CITED_TEXT, a web_search_result_location citation; streamed as a
 *                          citations_delta before its text); the OpenAI wires get the same text uncited
 *     priority-tier        the account has Anthropic Priority Tier capacity: the answer's usage.service_tier is
 *                          "priority" unless the request says service_tier: "standard_only" (its "auto", the
 *                          default, runs there); without it "standard". On the OpenAI wires: the project's
 *                          default tier is priority, so service_tier "priority" for a request naming none or auto
 *     stop=REASON          Anthropic stop reason (end_turn|max_tokens|stop_sequence|tool_use|refusal|pause_turn|
 *                          model_context_window_exceeded)
 *     stop-sequence=STR    stop on the custom stop sequence STR (stop_reason stop_sequence, stop_sequence STR;
 *                          stop=stop_sequence alone matches the sequence END)
 *   faults
 *     error=STATUS         400|401|402|403|404|408|409|413|429|500|502|503|504|529 with the provider's body
 *     error-in-200=STATUS  OpenRouter's way with a failure its 200 head already announced (wire-formats §3):
 *                          non-streaming, a 200 whose body is the error `{"error":{"code":STATUS,"message"}}`;
 *                          streaming, a 200 whose first event is the error chunk (stream-error-after=0), with
 *                          the usage of the prompt it read (any first error chunk on OpenRouter states it). The
 *                          OpenAI Responses API: a 200 `response` with status "failed", its `error` and the
 *                          usage of the prompt it read (streaming: its error events first). The other
 *                          providers, which never do this, answer the HTTP error for STATUS
 *     spend-limit          the provider's answer when the account's credit or spend limit is exhausted: OpenAI
 *                          429 type/code insufficient_quota, Anthropic 402 billing_error, OpenRouter 402
 *     retry-after=S        `retry-after` header on the error (seconds, sent as given)
 *     retry-after-ms=MS    `retry-after-ms` header on the error
 *     should-retry=BOOL    `x-should-retry` header on the error
 *     message=STRING       error message override (HTTP errors, error-in-200 and in-stream error events)
 *     hang                 accept and never answer (ends when the client disconnects or the fake closes)
 *     hold                 accept and wait until the test calls release(), then answer as the rest of the step
 *                          says (a call held in flight while the test does something else; ends as hang when
 *                          the client disconnects or the fake closes first)
 *     redirect[=STATUS]    a redirect (301 by default; 302, 307, 308) to the same path on another host, with an
 *                          empty body, as a base URL that moved (or says http:// for https://) answers
 *     reset-after=N        stream N SSE frames (non-streaming: half the body if N > 0) then reset the connection;
 *                          N = 0 resets before any response byte
 *     reset-at-end         streaming: every frame, the terminal one included (message_stop, [DONE],
 *                          response.completed), then reset the connection instead of ending it
 *     malformed[=N]        after N frames (default 2) send a frame with invalid JSON and end the stream;
 *                          non-streaming: a 200 with an invalid JSON body (whole: it ends as an object does)
 *     cut-short            non-streaming: a 200 whose body is the first half of the answer, ended cleanly (its
 *                          chunked body closed, no reset: a proxy's `res.end(half)`); streaming: the frames before
 *                          the middle one, then the first half of that frame (mid-JSON, no line end), ended cleanly
 *     stream-error=STATUS  after 2 frames send the provider's in-stream error event for STATUS and end;
 *                          non-streaming: the HTTP error for STATUS
 *     stream-error-after=N the in-stream error after N frames instead of 2; 0 = a 200 whose first event is
 *                          the error (Anthropic's overloaded_error before message_start)
 *     bad-body=KIND        non-streaming: a 200 whose JSON body is not the provider's response object; KIND is
 *                          string (the JSON string "oops"), empty ({}), no-usage, no-content (no content /
 *                          choices), wrong-types (content / choices and usage are strings) or error (the
 *                          provider's own error body for an overload, Anthropic's 529 overloaded_error, OpenAI's
 *                          503, with status 200: what a proxy relaying the error under its own 200 answers)
 *     no-terminal          streaming: every frame but the terminal one (Anthropic message_stop, OpenAI and
 *                          OpenRouter [DONE]), then the stream ends cleanly
 *     not-sse              streaming: a 200 that is no event stream but the whole answer as one JSON object
 *                          (an OpenAI-compatible server that ignores stream: true, a proxy's own page)
 *     oversize=BYTES       streaming: after 2 frames, a data line of BYTES bytes that never ends, then the stream
 *                          ends; non-streaming: a valid 200 whose reply text is BYTES long
 *     stall-after=N        streaming: N SSE frames, then silence with the connection open (an idle stream; ends
 *                          when the client disconnects or the fake closes)
 *     hold-after=N         streaming: N SSE frames, then wait until the test calls release() and send the rest (an
 *                          answer held mid-stream while the test does something else; ends as stall-after when
 *                          the client disconnects or the fake closes first)
 *     processing[=N]       streaming: N keep-alive comments before the first event (OpenRouter's `: OPENROUTER
 *                          PROCESSING`, `: keep-alive` elsewhere), one every drip MS (300 by default); without
 *                          N, comments only, for ever (a model that never starts; ends when the client leaves)
 *     drip=MS              delay every SSE frame (non-streaming: every body chunk) by MS
 *     slow-headers=MS      delay MS before the status line
 *     gzip                 the answer (JSON, stream or error) sent with content-encoding: gzip
 *     ok                   no-op (a queued "ok" step succeeds even if the text carries fault directives)
 */
import { bool, DirectiveError, int, parseUsage, required } from './directive-values.ts';

export { DirectiveError } from './directive-values.ts';

export type FakeUsage = {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
  reasoning?: number;
  cost?: number;
};

/** One scripted reply. Shape fields describe a success; fault fields (see FAULT_KEYS) override it. */
export type FakeStep = {
  text?: string;
  /** A reply text of this many bytes in 1 KiB words (a long answer). */
  long?: number;
  toolCalls?: number;
  /** Exact tool calls (script objects only, e.g. an agent test's `read_file {path}`), after any text. */
  toolUses?: Array<{ name: string; input: Record<string, unknown> }>;
  thinking?: boolean | string;
  redactedThinking?: boolean;
  usage?: FakeUsage;
  /** Server-side web searches the model runs (when the request offers the server tool). */
  webSearches?: number;
  imageCheck?: boolean;
  /** The answer ends with a text block citing a web page (Anthropic citations). */
  cite?: boolean;
  /** The account has Anthropic Priority Tier capacity: `auto` requests run (and are reported) at `priority`. */
  priorityTier?: boolean;
  stopReason?: string;
  stopSequence?: string;
  error?: number;
  /** OpenRouter: the error for this status inside a 200 (others: the HTTP error). */
  errorIn200?: number;
  spendLimit?: boolean;
  retryAfter?: string;
  retryAfterMs?: string;
  shouldRetry?: boolean;
  message?: string;
  hang?: boolean;
  /** Wait for the fake's release() before answering. */
  hold?: boolean;
  /** A redirect status (3xx) answered with a `location` and no body. */
  redirect?: number;
  resetAfter?: number;
  /** Reset the connection after the terminal frame instead of ending the stream. */
  resetAtEnd?: boolean;
  malformed?: number;
  /** Non-streaming: the body's first half, ended cleanly. */
  cutShort?: boolean;
  streamError?: number;
  streamErrorAfter?: number;
  badBody?: BadBodyKind;
  noTerminal?: boolean;
  notSse?: boolean;
  oversize?: number;
  stallAfter?: number;
  holdAfter?: number;
  /** Keep-alive comments before the first event (Infinity: nothing else). */
  processing?: number;
  dripMs?: number;
  slowHeadersMs?: number;
  /** Send the answer with `content-encoding: gzip`. */
  gzip?: boolean;
};

export const FAULT_KEYS = [
  'error',
  'errorIn200',
  'spendLimit',
  'retryAfter',
  'retryAfterMs',
  'shouldRetry',
  'message',
  'hang',
  'hold',
  'redirect',
  'resetAfter',
  'resetAtEnd',
  'malformed',
  'cutShort',
  'streamError',
  'streamErrorAfter',
  'badBody',
  'noTerminal',
  'notSse',
  'oversize',
  'stallAfter',
  'holdAfter',
  'processing',
  'dripMs',
  'slowHeadersMs',
  'gzip',
] as const satisfies readonly (keyof FakeStep)[];

export const BAD_BODY_KINDS = ['string', 'empty', 'no-usage', 'no-content', 'wrong-types', 'error'] as const;
export type BadBodyKind = (typeof BAD_BODY_KINDS)[number];

export const ERROR_STATUSES = [400, 401, 402, 403, 404, 408, 409, 413, 429, 500, 502, 503, 504, 529];

/** Parses every `[[fake:…]]` directive in `text` into one step (empty when there is none). */
export function parseDirectives(text: string): FakeStep {
  const step: FakeStep = {};
  for (const match of text.matchAll(/\[\[fake:(.*?)\]\]/gs)) {
    Object.assign(step, parseItems(match[1]));
  }
  return step;
}

/** Parses the inside of one directive (`error=429;retry-after=1`). */
export function parseItems(body: string): FakeStep {
  const step: FakeStep = {};
  for (const raw of body.split(';')) {
    const item = raw.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    const key = (eq < 0 ? item : item.slice(0, eq)).trim().toLowerCase().replaceAll('_', '-');
    const value = eq < 0 ? undefined : item.slice(eq + 1).trim();
    applyItem(step, key, value);
  }
  return step;
}

/** Turns a `script()` entry (a step or a directive body string) into a step. */
export function toStep(entry: FakeStep | string): FakeStep {
  return typeof entry === 'string' ? parseItems(entry.replace(/^\[\[fake:|\]\]$/g, '')) : { ...entry };
}

/**
 * The plan for one request. Without a scripted step the directives decide alone. With one, the step's faults
 * replace the directives' faults (so "429 then success" works although the retried body repeats the same
 * text), and its shape fields override the directives' shape fields.
 */
export function resolvePlan(scripted: FakeStep | undefined, fromText: FakeStep): FakeStep {
  if (scripted === undefined) return { ...fromText };
  const plan: FakeStep = { ...fromText };
  for (const key of FAULT_KEYS) delete plan[key];
  return { ...plan, ...scripted };
}

// --- internal ---

function applyItem(step: FakeStep, key: string, value: string | undefined): void {
  switch (key) {
    case 'ok':
      return;
    case 'text':
      step.text = required(key, value);
      return;
    case 'long':
      step.long = int(key, required(key, value));
      return;
    case 'tool-call':
      step.toolCalls = value === undefined ? 1 : int(key, value);
      return;
    case 'tool-calls':
      step.toolCalls = int(key, required(key, value));
      return;
    case 'thinking':
      step.thinking = value === undefined || value === '' ? true : value;
      return;
    case 'redacted-thinking':
      step.redactedThinking = true;
      return;
    case 'usage':
      step.usage = parseUsage(required(key, value));
      return;
    case 'web-search':
      step.webSearches = int(key, required(key, value));
      return;
    case 'image-check':
      step.imageCheck = true;
      return;
    case 'cite':
      step.cite = true;
      return;
    case 'priority-tier':
      step.priorityTier = true;
      return;
    case 'stop':
      step.stopReason = required(key, value);
      return;
    case 'stop-sequence':
      step.stopReason = 'stop_sequence';
      step.stopSequence = required(key, value);
      return;
    case 'error':
      step.error = status(key, value);
      return;
    case 'error-in-200':
      step.errorIn200 = status(key, value);
      return;
    case 'spend-limit':
      step.spendLimit = true;
      return;
    case 'stream-error':
      step.streamError = status(key, value);
      return;
    case 'stream-error-after':
      step.streamErrorAfter = int(key, required(key, value));
      return;
    case 'retry-after':
      step.retryAfter = required(key, value);
      return;
    case 'retry-after-ms':
      step.retryAfterMs = required(key, value);
      return;
    case 'should-retry':
      step.shouldRetry = bool(key, value);
      return;
    case 'message':
      step.message = required(key, value);
      return;
    case 'hang':
      step.hang = true;
      return;
    case 'hold':
      step.hold = true;
      return;
    case 'redirect': {
      const code = value === undefined ? 301 : int(key, value);
      if (![301, 302, 307, 308].includes(code))
        throw new DirectiveError(`fake provider: redirect=${value} is not 301, 302, 307 or 308`);
      step.redirect = code;
      return;
    }
    case 'reset-after':
      step.resetAfter = int(key, required(key, value));
      return;
    case 'reset-at-end':
      step.resetAtEnd = true;
      return;
    case 'malformed':
      step.malformed = value === undefined ? 2 : int(key, value);
      return;
    case 'cut-short':
      step.cutShort = true;
      return;
    case 'bad-body': {
      const kind = required(key, value) as BadBodyKind;
      if (!BAD_BODY_KINDS.includes(kind))
        throw new DirectiveError(`fake provider: unknown bad-body '${kind}'`);
      step.badBody = kind;
      return;
    }
    case 'no-terminal':
      step.noTerminal = true;
      return;
    case 'not-sse':
      step.notSse = true;
      return;
    case 'oversize':
      step.oversize = int(key, required(key, value));
      return;
    case 'stall-after':
      step.stallAfter = int(key, required(key, value));
      return;
    case 'hold-after':
      step.holdAfter = int(key, required(key, value));
      return;
    case 'processing':
      step.processing = value === undefined ? Number.POSITIVE_INFINITY : int(key, value);
      return;
    case 'drip':
      step.dripMs = int(key, required(key, value));
      return;
    case 'slow-headers':
      step.slowHeadersMs = int(key, required(key, value));
      return;
    case 'gzip':
      step.gzip = true;
      return;
    default:
      throw new DirectiveError(`fake provider: unknown directive '${key}'`);
  }
}

function status(key: string, value: string | undefined): number {
  const n = int(key, required(key, value));
  if (!ERROR_STATUSES.includes(n)) throw new DirectiveError(`fake provider: unsupported status ${n}`);
  return n;
}
