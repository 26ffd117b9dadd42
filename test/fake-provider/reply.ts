/**
 * One generation request, end to end: checks as the real API makes them, the plan (scripted step plus
 * directives), then an error, a hang, a reset, or a JSON/SSE reply with the plan's timing faults.
 */

import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { FakePromptCache } from './prompt-cache.ts';
import type { Codec, Reply, ReplyContext } from './responses.ts';
import { buildReply } from './responses.ts';
import type { FakeStep } from './script.ts';
import { DirectiveError, parseDirectives, resolvePlan } from './script.ts';
import type { BodyOptions, Tracker } from './sse.ts';
import { chunkStream, scriptFrames, sleep, splitBody } from './sse.ts';
import type { FakeStoredResponses } from './stored-responses.ts';
import type { FakeThreads } from './threads.ts';

/** What a reply needs from the fake instance. */
export type ReplyDeps = {
  tracker: Tracker;
  nextStep(): FakeStep | undefined;
  newId(prefix: string): string;
  now(): number;
  /** Anthropic message threads held by this instance. */
  threads: FakeThreads;
  /** Responses API answers stored by this instance. */
  responses: FakeStoredResponses;
  /** Anthropic prompt caches written by this instance's answers. */
  promptCache: FakePromptCache;
  /** Requests waiting on a `hold` step: each resumes when called (the fake's release()). */
  holds: Set<() => void>;
};

/** Thrown (in-process use only) to make the caller's fetch fail like a reset connection. */
export class ConnectionResetError extends Error {
  override name = 'ConnectionResetError';
  code = 'ECONNRESET';
}

/** Answers one `POST` to a generation route. */
export async function replyToGeneration(c: Context, codec: Codec, deps: ReplyDeps): Promise<Response> {
  const signal = c.req.raw.signal;
  const text = await c.req.text();
  const sent = parseJson(text);
  const model = typeof sent?.model === 'string' ? sent.model : 'unknown';
  const ctx: ReplyContext = {
    id: deps.newId(codec.messageIdPrefix),
    requestId: deps.newId('req_01Fake'),
    model,
    created: Math.floor(deps.now() / 1000),
    includeUsage: false,
  };
  const refused = codec.checkHeaders(c.req.raw.headers, ctx);
  if (refused) return json(refused.status, refused.body, codec.headers(ctx));
  if (sent === undefined)
    return errorReply(codec, ctx, 400, 'fake provider: the request body is not valid JSON');
  // a thread continued: checked and answered as the whole conversation it holds (threads.ts)
  const opened = codec.provider === 'anthropic' ? deps.threads.open(sent) : { body: sent };
  if ('refusal' in opened) {
    const { status, message, details } = opened.refusal;
    return json(status, codec.errorBody(status, message, ctx, details), codec.headers(ctx));
  }
  const parsed = opened.body;
  const invalid = codec.checkBody(parsed, c.req.raw.headers);
  if (typeof invalid === 'string') return errorReply(codec, ctx, 400, invalid);
  if (invalid) {
    const { message, ...named } = invalid;
    return json(400, codec.errorBody(400, message, ctx, named), codec.headers(ctx));
  }
  const unstored = codec.storesResponses ? deps.responses.refusal(parsed) : undefined;
  if (unstored) return json(unstored.status, unstored.body, codec.headers(ctx));
  const turn = codec.readTurn(parsed);
  ctx.includeUsage = turn.includeUsage;
  ctx.body = parsed;
  let plan: FakeStep;
  try {
    plan = resolvePlan(deps.nextStep(), parseDirectives(turn.turnText));
  } catch (err) {
    if (err instanceof DirectiveError) return errorReply(codec, ctx, 400, err.message);
    throw err;
  }
  const res = await answer(c, codec, deps, { ctx, turn, parsed, plan, signal });
  return plan.gzip ? gzipped(res) : res;
}

/** The answer the plan asks for (before any content coding). */
async function answer(
  c: Context,
  codec: Codec,
  deps: ReplyDeps,
  at: {
    ctx: ReplyContext;
    turn: ReturnType<Codec['readTurn']>;
    parsed: Record<string, unknown>;
    plan: FakeStep;
    signal: AbortSignal;
  },
): Promise<Response> {
  const { ctx, turn, parsed, signal } = at;
  let plan = at.plan;
  const early = await faultBeforeAnswer(c, codec, deps, ctx, plan);
  if (early) return early;
  if (plan.errorIn200 !== undefined) {
    // OpenRouter tells of a failure after its 200 head inside that 200 (wire-formats §3), the Responses API
    // with a failed response; the others never do
    if (codec.errorIn200Body === undefined) plan = { ...plan, error: plan.errorIn200 };
    else if (turn.stream) plan = { ...plan, streamError: plan.errorIn200, streamErrorAfter: 0 };
    else
      return json(200, codec.errorIn200Body(plan.errorIn200, plan.message, ctx), {
        ...codec.headers(ctx),
        ...faultHeaders(plan),
      });
  }
  const status = plan.error ?? (turn.stream ? undefined : plan.streamError);
  if (status !== undefined) return errorReply(codec, ctx, status, plan.message, faultHeaders(plan));
  if (codec.provider === 'anthropic') turn.promptCache = deps.promptCache.use(parsed);
  const reply = buildReply(turn, plan, () => deps.newId(codec.toolIdPrefix));
  if (codec.storesResponses) deps.responses.hold(parsed, ctx.id);
  if (codec.provider === 'anthropic')
    deps.threads.hold(parsed, ctx.id, (codec.encodeJson(reply, ctx) as { content: unknown }).content);
  const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
  const body = {
    dripMs: plan.dripMs,
    signal,
    tracker: deps.tracker,
    destroy: socket && (() => socket.destroy()),
  };
  if (turn.stream && plan.notSse) return json(200, codec.encodeJson(reply, ctx), codec.headers(ctx));
  if (turn.stream) {
    const frames = scriptFrames(codec.encodeFrames(reply, ctx), plan, {
      malformed: codec.malformedFrame(ctx),
      error: (s, after) => codec.errorFrame(s, ctx, after, plan.message),
      openText: codec.openTextFrame(ctx),
    });
    const resetAfter = plan.resetAtEnd ? frames.length : plan.resetAfter;
    const stream = chunkStream(frames, {
      ...body,
      resetAfter,
      stallAfter: plan.stallAfter,
      holdAfter: plan.holdAfter,
      hold: () => held(signal, deps),
      ...(plan.processing === undefined ? {} : { lead: keepAlive(codec, plan) }),
    });
    return new Response(stream, {
      status: 200,
      headers: {
        ...codec.headers(ctx),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
      },
    });
  }
  const encoded = encodeBody(codec, reply, ctx, plan);
  if (!plan.dripMs && plan.resetAfter === undefined && plan.oversize === undefined && !plan.cutShort)
    return json(200, encoded, codec.headers(ctx));
  // cut short: two of the body's four pieces, then the chunked body ends as a whole one does
  const pieces = plan.cutShort ? splitBody(encoded).slice(0, 2) : splitBody(encoded);
  const stream = chunkStream(pieces, {
    ...body,
    resetAfter: plan.resetAfter === undefined ? undefined : 2,
  });
  return new Response(stream, {
    status: 200,
    headers: { ...codec.headers(ctx), 'content-type': 'application/json' },
  });
}

/**
 * The answer of a fault that comes before any answer (a slow or missing head, a hold, a redirect, a reset, a
 * spent credit, an HTTP error with its retry headers), or undefined when the plan asks for none of them. Also
 * what `POST /v1/messages/count_tokens` answers its directives with.
 */
export async function faultBeforeAnswer(
  c: Context,
  codec: Codec,
  deps: ReplyDeps,
  ctx: ReplyContext,
  plan: FakeStep,
): Promise<Response | undefined> {
  const signal = c.req.raw.signal;
  if (plan.slowHeadersMs) await sleep(plan.slowHeadersMs, signal);
  if (plan.hang) return hang(signal, deps.tracker);
  if (plan.hold && !(await held(signal, deps))) return new Response(null, { status: 499 });
  if (plan.redirect !== undefined)
    return new Response(null, {
      status: plan.redirect,
      headers: { location: `https://moved.example${new URL(c.req.url).pathname}` },
    });
  if (plan.resetAfter === 0) return resetNow(c, signal, deps.tracker);
  if (plan.spendLimit) {
    const { status, body } = codec.spendLimit(plan.message, ctx);
    return json(status, body, { ...codec.headers(ctx), ...faultHeaders(plan) });
  }
  return undefined;
}

/** An error reply in the codec's shape with its headers. */
export function errorReply(
  codec: Codec,
  ctx: ReplyContext,
  status: number,
  message: string | undefined,
  extra: Record<string, string> = {},
): Response {
  return json(status, codec.errorBody(status, message, ctx), { ...codec.headers(ctx), ...extra });
}

// --- internal ---

/** The same answer sent with `content-encoding: gzip` (a server may compress for a client that sent no Accept-Encoding). */
function gzipped(res: Response): Response {
  if (res.body === null) return res;
  const headers = new Headers(res.headers);
  headers.set('content-encoding', 'gzip');
  headers.delete('content-length');
  return new Response(res.body.pipeThrough(new CompressionStream('gzip')), { status: res.status, headers });
}

/** The 200 body: the provider's response object, or the scripted fault in its place. */
function encodeBody(codec: Codec, reply: Reply, ctx: ReplyContext, plan: FakeStep): string {
  if (plan.malformed !== undefined) return `{"id":"${ctx.id}","malformed": oops}`;
  if (plan.oversize !== undefined) {
    const text = 'x'.repeat(plan.oversize);
    return JSON.stringify(codec.encodeJson({ ...reply, blocks: [{ type: 'text', text }] }, ctx));
  }
  const body = codec.encodeJson(reply, ctx) as Record<string, unknown>;
  const content = codec.provider === 'anthropic' ? 'content' : 'choices' in body ? 'choices' : 'output';
  switch (plan.badBody) {
    case undefined:
      return JSON.stringify(body);
    case 'string':
      return '"oops"';
    case 'empty':
      return '{}';
    case 'no-usage': {
      const { usage: _, ...rest } = body;
      return JSON.stringify(rest);
    }
    case 'no-content': {
      const { [content]: _, ...rest } = body;
      return JSON.stringify(rest);
    }
    case 'wrong-types':
      return JSON.stringify({ ...body, [content]: 'oops', usage: 'oops' });
    case 'error':
      return JSON.stringify(codec.errorBody(codec.provider === 'anthropic' ? 529 : 503, plan.message, ctx));
  }
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function json(status: number, body: unknown, headers: Record<string, string>): Response {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new Response(text, { status, headers: { ...headers, 'content-type': 'application/json' } });
}

export function faultHeaders(plan: FakeStep): Record<string, string> {
  const headers: Record<string, string> = {};
  if (plan.retryAfter !== undefined) headers['retry-after'] = plan.retryAfter;
  if (plan.retryAfterMs !== undefined) headers['retry-after-ms'] = plan.retryAfterMs;
  if (plan.shouldRetry !== undefined) headers['x-should-retry'] = String(plan.shouldRetry);
  return headers;
}

/** The `processing` directive's comments: OpenRouter's own while its model has not started. */
function keepAlive(codec: Codec, plan: FakeStep): NonNullable<BodyOptions['lead']> {
  const frame = codec.provider === 'openrouter' ? ': OPENROUTER PROCESSING\n\n' : ': keep-alive\n\n';
  return { frame, count: plan.processing ?? 0, everyMs: plan.dripMs ?? 300 };
}

/** Never answers; settles when the client goes away or the fake shuts down. */
export function hang(signal: AbortSignal, tracker: Tracker): Promise<Response> {
  return new Promise((resolve) => {
    const done = () => {
      untrack();
      signal.removeEventListener('abort', done);
      resolve(new Response(null, { status: 499 }));
    };
    const untrack = tracker.add(done);
    if (signal.aborted) done();
    else signal.addEventListener('abort', done, { once: true });
  });
}

/** Waits for release(): true then, false when the client left or the fake shut down first. */
function held(signal: AbortSignal, deps: ReplyDeps): Promise<boolean> {
  return new Promise((resolve) => {
    const settle = (released: boolean) => {
      untrack();
      deps.holds.delete(release);
      signal.removeEventListener('abort', gone);
      resolve(released);
    };
    const release = () => settle(true);
    const gone = () => settle(false);
    const untrack = deps.tracker.add(gone);
    deps.holds.add(release);
    if (signal.aborted) gone();
    else signal.addEventListener('abort', gone, { once: true });
  });
}

function resetNow(c: Context, signal: AbortSignal, tracker: Tracker): Promise<Response> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  // In-process use has no socket: fail the caller's fetch instead.
  if (incoming === undefined) throw new ConnectionResetError('fake provider: connection reset');
  incoming.socket.destroy();
  return hang(signal, tracker);
}
