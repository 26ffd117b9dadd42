/**
 * A fake LLM provider speaking Anthropic Messages (and token counting), OpenAI Chat Completions and
 * Responses, and OpenRouter, scriptable per
 * request (see script.ts). `createFakeProvider` gives a Hono app for in-process use (hand `fetch` over);
 * `startFakeProvider` listens on a loopback port.
 */

import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import { anthropicCodec } from './anthropic.ts';
import { countTokens } from './count-tokens.ts';
import { openaiCodec, openrouterCodec } from './openai.ts';
import { responsesCodec } from './openai-responses.ts';
import { FakePromptCache } from './prompt-cache.ts';
import { ConnectionResetError, replyToGeneration } from './reply.ts';
import type { Codec, Provider } from './responses.ts';
import type { FakeStep } from './script.ts';
import { toStep } from './script.ts';
import type { Tracker } from './sse.ts';
import { FakeStoredResponses } from './stored-responses.ts';
import { FakeThreads } from './threads.ts';

/** One request as the fake received it. */
export type RecordedRequest = {
  method: string;
  /** Path with query string, e.g. `/v1/messages?beta=true`. */
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** Parsed JSON body; the raw text when it is not JSON; undefined when empty. */
  body: unknown;
  provider: Provider;
  /** `Date.now()` at arrival. */
  time: number;
  /**
   * `Date.now()` when the connection closed before the response was complete: the caller went away (or a
   * scripted reset closed it); undefined while open or after a complete response.
   */
  closedEarlyAt?: number;
};

export type FakeProviderOptions = {
  /** Step used when the queue is empty (a step or a directive string such as `'error=529'`). */
  defaultStep?: FakeStep | string;
  /** Ids listed by `GET /v1/models`. */
  models?: string[];
  /** Clock for `created` fields; defaults to `Date.now`. */
  now?: () => number;
};

export type FakeProvider = {
  app: Hono;
  /** A fetch-compatible function answering from the app in-process. */
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** Every request received, in arrival order (cleared in place by `reset()`). */
  requests: RecordedRequest[];
  /** Queues steps consumed one per generation request, in order. */
  script(steps: (FakeStep | string)[]): void;
  /** Replaces the step used when the queue is empty (undefined: directives only). */
  setDefault(step: FakeStep | string | undefined): void;
  /** Clears recorded requests, the queue and id counters; restores the default step from the options. */
  reset(): void;
  /** Lets every request held by a `hold` step answer; returns how many there were. */
  release(): number;
  /** Ends every hung request and open stream. */
  shutdown(): void;
};

export type RunningFakeProvider = FakeProvider & {
  port: number;
  /** `http://127.0.0.1:PORT` (also ANTHROPIC_BASE_URL). */
  url: string;
  anthropicBaseUrl: string;
  /** `…/v1`. */
  openaiBaseUrl: string;
  /** `…/api/v1`. */
  openrouterBaseUrl: string;
  /** Stops listening and destroys every open connection (hung or streaming). */
  close(): Promise<void>;
};

export const DEFAULT_MODELS = ['claude-fake-1', 'gpt-fake-1', 'fake/model-1'];

/** Builds the fake provider app and its scripting handle, without listening. */
export function createFakeProvider(options: FakeProviderOptions = {}): FakeProvider {
  const requests: RecordedRequest[] = [];
  const queue: FakeStep[] = [];
  const initialDefault = options.defaultStep === undefined ? undefined : toStep(options.defaultStep);
  let defaultStep = initialDefault;
  let counter = 0;
  const stoppers = new Set<() => void>();
  const tracker: Tracker = {
    add(stop) {
      stoppers.add(stop);
      return () => stoppers.delete(stop);
    },
  };
  const now = options.now ?? Date.now;
  const threads = new FakeThreads();
  const responses = new FakeStoredResponses();
  const promptCache = new FakePromptCache(now);
  const holds = new Set<() => void>();
  const deps = {
    threads,
    responses,
    promptCache,
    holds,
    tracker,
    nextStep: () => queue.shift() ?? defaultStep,
    newId: (prefix: string) => `${prefix}${String(++counter).padStart(14, '0')}`,
    now,
  };
  const models = options.models ?? DEFAULT_MODELS;

  const app = new Hono();
  app.use('*', async (c, next) => {
    const record = await recordOf(c, now());
    requests.push(record);
    // the node server aborts the request signal when the connection closes before the response finished
    c.req.raw.signal.addEventListener('abort', () => {
      record.closedEarlyAt = now();
    });
    await next();
  });
  app.post('/v1/messages', (c) => replyToGeneration(c, anthropicCodec, deps));
  app.post('/v1/messages/count_tokens', (c) => countTokens(c, deps));
  app.post('/v1/chat/completions', (c) => replyToGeneration(c, openaiCodec, deps));
  app.post('/v1/responses', (c) => replyToGeneration(c, responsesCodec, deps));
  app.post('/api/v1/chat/completions', (c) => replyToGeneration(c, openrouterCodec, deps));
  app.get('/v1/models', (c) => listModels(c, codecFor(c.req.path, c.req.raw.headers), models, deps.newId));
  app.get('/api/v1/models', (c) => listModels(c, openrouterCodec, models, deps.newId));
  app.notFound((c) => {
    const message = `Unknown request URL: ${c.req.method} ${c.req.path}.`;
    return c.json(
      { error: { message, type: 'invalid_request_error', param: null, code: 'unknown_url' } },
      404,
    );
  });
  app.onError((err) => {
    // A reset has no HTTP answer: let the in-process caller's fetch reject.
    throw err;
  });

  return {
    app,
    async fetch(input, init) {
      const request = new Request(input, init);
      try {
        const response = await app.fetch(request);
        // Like a real fetch, an aborted request rejects even though the app answered after the abort.
        if (request.signal.aborted) throw request.signal.reason;
        return response;
      } catch (err) {
        if (err instanceof ConnectionResetError) throw new TypeError('fetch failed', { cause: err });
        throw err;
      }
    },
    requests,
    script(steps) {
      queue.push(...steps.map(toStep));
    },
    setDefault(step) {
      defaultStep = step === undefined ? undefined : toStep(step);
    },
    reset() {
      requests.length = 0;
      queue.length = 0;
      counter = 0;
      threads.clear();
      responses.clear();
      promptCache.clear();
      defaultStep = initialDefault;
    },
    release() {
      const waiting = [...holds];
      for (const go of waiting) go();
      return waiting.length;
    },
    shutdown() {
      for (const stop of [...stoppers]) stop();
    },
  };
}

/** Starts the fake on 127.0.0.1 (`port` 0 or omitted: a free port). */
export async function startFakeProvider(
  options: FakeProviderOptions & { port?: number } = {},
): Promise<RunningFakeProvider> {
  const fake = createFakeProvider(options);
  const server = createAdaptorServer({ fetch: fake.app.fetch, overrideGlobalObjects: false });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  let closing: Promise<void> | undefined;
  return {
    ...fake,
    port,
    url,
    anthropicBaseUrl: url,
    openaiBaseUrl: `${url}/v1`,
    openrouterBaseUrl: `${url}/api/v1`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
        fake.shutdown();
      });
      return closing;
    },
  };
}

// --- internal ---

async function recordOf(c: Context, time: number): Promise<RecordedRequest> {
  const url = new URL(c.req.url);
  const text = c.req.method === 'GET' || c.req.method === 'HEAD' ? '' : await c.req.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = text;
  }
  return {
    method: c.req.method,
    path: url.pathname + url.search,
    headers: Object.fromEntries(c.req.raw.headers),
    body,
    provider: codecFor(url.pathname, c.req.raw.headers).provider,
    time,
  };
}

function codecFor(path: string, headers: Headers): Codec {
  if (path.startsWith('/api/')) return openrouterCodec;
  if (path.startsWith('/v1/messages')) return anthropicCodec;
  if (path.startsWith('/v1/responses')) return responsesCodec;
  if (path.startsWith('/v1/models') && (headers.has('anthropic-version') || headers.has('x-api-key'))) {
    return anthropicCodec;
  }
  return openaiCodec;
}

function listModels(c: Context, codec: Codec, models: string[], newId: (prefix: string) => string): Response {
  const ctx = {
    id: newId('list_'),
    requestId: newId('req_01Fake'),
    model: '',
    created: 0,
    includeUsage: false,
  };
  const refused = codec.checkHeaders(c.req.raw.headers, ctx);
  if (refused) return c.json(refused.body as object, refused.status as 401, codec.headers(ctx));
  return c.json(codec.modelsList(models) as object, 200, codec.headers(ctx));
}
