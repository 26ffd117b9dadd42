/**
 * What every kind of gateway answer carries (spec 1 §Versioning, DECISIONS §4, README §Gateway, issue 13),
 * against one real `svc gateway`: the request id under its three names (and as the Anthropic body's
 * `request_id`), `svc-routed-model` on every answer of a routed request, the version headers on the
 * service-owned paths and never on the provider paths, `x-should-retry` (false on 400/401/403/404/405/413/
 * 415, on quota_exceeded and on the gateway's 502/504; true with `retry-after` on 429 upstream_rate_limited
 * and on every 503), the content type, and the error body of the path's own provider shape.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { rawExchange } from '../helpers/raw-http.ts';
import { runSvc } from '../helpers/svc.ts';

const MAX_BODY_BYTES = 16_384;
const JSON_TYPE = /^application\/json/;
const SSE_TYPE = /^text\/event-stream/;

type Auth = 'anthropic' | 'openai' | 'none';
/** The error body of the path: Anthropic, OpenAI (chat and Responses), or the service's own. */
type Body = 'anthropic' | 'openai' | 'service';

interface Case {
  name: string;
  method?: string;
  path: string;
  auth?: Auth;
  /** Which key: the full one, the one allowed only haiku under a tiny daily cap, a revoked one, a wrong one. */
  key?: 'main' | 'capped' | 'revoked' | 'wrong';
  headers?: Record<string, string>;
  body?: unknown;
  status: number;
  type: RegExp;
  /** The registry model in `svc-routed-model`; null: the request was not routed, so no header. */
  routed?: string | null;
  /** `x-should-retry`; null: no header; undefined: not checked. */
  retry?: 'true' | 'false' | null;
  /** `retry-after` of a retryable answer (whole seconds); a RegExp when the value is the gateway's backoff. */
  retryAfter?: string | RegExp;
  retryAfterMs?: string;
  /** Version headers (service-owned paths) or none (provider paths); undefined: not checked (/metrics). */
  versioned?: boolean;
  error?: { body: Body; code: string };
  /** Extra header checks. */
  also?: Record<string, string>;
}

const ANTHROPIC_VERSION = { 'anthropic-version': '2023-06-01' };

function messages(model: string, text: string, extra: Record<string, unknown> = {}) {
  return { model, max_tokens: 64, messages: [{ role: 'user', content: text }], ...extra };
}
function chat(model: string, text: string, extra: Record<string, unknown> = {}) {
  return { model, messages: [{ role: 'user', content: text }], ...extra };
}
function responses(model: string, text: string, extra: Record<string, unknown> = {}) {
  return { model, input: text, ...extra };
}

const SUCCESS: Case[] = [];
for (const stream of [false, true]) {
  const type = stream ? SSE_TYPE : JSON_TYPE;
  const s = stream ? { stream: true } : {};
  const label = stream ? 'SSE' : 'JSON';
  SUCCESS.push(
    {
      name: `messages same wire ${label}`,
      path: '/v1/messages',
      auth: 'anthropic',
      body: messages('haiku', 'hi', s),
      status: 200,
      type,
      routed: 'anthropic:claude-haiku-4-5',
    },
    {
      name: `messages translated ${label}`,
      path: '/v1/messages',
      auth: 'anthropic',
      body: messages('openai:gpt-5-mini', 'hi', s),
      status: 200,
      type,
      routed: 'openai:gpt-5-mini',
    },
    {
      name: `chat same wire ${label}`,
      path: '/v1/chat/completions',
      auth: 'openai',
      body: chat('openai:gpt-5-mini', 'hi', s),
      status: 200,
      type,
      routed: 'openai:gpt-5-mini',
    },
    {
      name: `chat translated ${label}`,
      path: '/v1/chat/completions',
      auth: 'openai',
      body: chat('haiku', 'hi', s),
      status: 200,
      type,
      routed: 'anthropic:claude-haiku-4-5',
    },
    {
      name: `responses same wire ${label}`,
      path: '/v1/responses',
      auth: 'openai',
      body: responses('openai:gpt-5-mini', 'hi', s),
      status: 200,
      type,
      routed: 'openai:gpt-5-mini',
    },
    {
      name: `responses translated ${label}`,
      path: '/v1/responses',
      auth: 'openai',
      body: responses('haiku', 'hi', s),
      status: 200,
      type,
      routed: 'anthropic:claude-haiku-4-5',
    },
  );
}

const CASES: Case[] = [
  // service-owned and unauthenticated paths
  {
    name: 'healthz',
    path: '/healthz',
    status: 200,
    type: JSON_TYPE,
    routed: null,
    retry: null,
    versioned: true,
  },
  { name: 'OPTIONS healthz', method: 'OPTIONS', path: '/healthz', status: 204, type: /.*/, versioned: true },
  {
    name: 'healthz pinned below the minimum',
    path: '/healthz',
    headers: { 'svc-api-version': '0.9' },
    status: 410,
    type: JSON_TYPE,
    versioned: true,
    error: { body: 'service', code: 'version_unsupported' },
    also: { 'svc-api-version': '0.9' },
  },
  {
    name: 'analytics is not hosted',
    path: '/analytics/usage',
    status: 404,
    type: JSON_TYPE,
    routed: null,
    versioned: true,
    error: { body: 'service', code: 'not_found' },
  },
  {
    // README §API versioning lists /routing/* with the service-owned paths; the agent server hosts them
    name: 'routing is not hosted',
    path: '/routing/policy',
    status: 404,
    type: JSON_TYPE,
    routed: null,
    versioned: true,
    error: { body: 'service', code: 'not_found' },
  },
  // a wrong method on a path the gateway serves is 405 with Allow, and every other path's 404 is versioned,
  // as on svc serve (README §API versioning)
  {
    name: 'POST healthz',
    method: 'POST',
    path: '/healthz',
    status: 405,
    type: JSON_TYPE,
    versioned: true,
    error: { body: 'service', code: 'method_not_allowed' },
    also: { allow: 'GET, HEAD' },
  },
  {
    name: 'OPTIONS metrics',
    method: 'OPTIONS',
    path: '/metrics',
    status: 405,
    type: JSON_TYPE,
    versioned: false,
    error: { body: 'service', code: 'method_not_allowed' },
    also: { allow: 'GET, HEAD' },
  },
  {
    name: 'healthz with a trailing slash',
    path: '/healthz/',
    status: 404,
    type: JSON_TYPE,
    versioned: true,
    error: { body: 'service', code: 'not_found' },
  },
  {
    name: 'an unknown path',
    path: '/nowhere',
    status: 404,
    type: JSON_TYPE,
    versioned: true,
    error: { body: 'service', code: 'not_found' },
  },
  {
    name: 'metrics',
    path: '/metrics',
    status: 200,
    type: /^text\/plain; version=0\.0\.4; charset=utf-8$/,
    routed: null,
    retry: null,
  },
  // lists and counts
  {
    name: 'models OpenAI list',
    path: '/v1/models',
    auth: 'openai',
    status: 200,
    type: JSON_TYPE,
    versioned: false,
  },
  {
    name: 'models Anthropic list',
    path: '/v1/models',
    auth: 'anthropic',
    status: 200,
    type: JSON_TYPE,
    versioned: false,
  },
  {
    name: 'count_tokens provider count',
    path: '/v1/messages/count_tokens',
    auth: 'anthropic',
    body: { model: 'haiku', messages: [{ role: 'user', content: 'hi' }] },
    status: 200,
    type: JSON_TYPE,
    routed: 'anthropic:claude-haiku-4-5',
    also: { 'svc-token-count': 'provider' },
  },
  {
    name: 'count_tokens estimate',
    path: '/v1/messages/count_tokens',
    auth: 'anthropic',
    body: { model: 'openai:gpt-5', messages: [{ role: 'user', content: 'hi' }] },
    status: 200,
    type: JSON_TYPE,
    routed: 'openai:gpt-5',
    also: { 'svc-token-count': 'estimate' },
  },
  {
    name: 'a provider path ignores Svc-API-Version',
    path: '/v1/messages',
    auth: 'anthropic',
    headers: { 'svc-api-version': '0.5' },
    body: messages('haiku', 'hi'),
    status: 200,
    type: JSON_TYPE,
    routed: 'anthropic:claude-haiku-4-5',
  },
  ...SUCCESS,
  // 400
  ...(['/v1/messages', '/v1/chat/completions', '/v1/responses', '/v1/messages/count_tokens'] as const).map(
    (path): Case => ({
      name: `400 body not JSON on ${path}`,
      path,
      auth: path.startsWith('/v1/messages') ? 'anthropic' : 'openai',
      body: '{not json',
      status: 400,
      type: JSON_TYPE,
      routed: null,
      retry: 'false',
      error: { body: path.startsWith('/v1/messages') ? 'anthropic' : 'openai', code: 'invalid_request' },
    }),
  ),
  // 401
  ...(
    [
      ['/v1/messages', 'anthropic', 'none', 'missing_token'],
      ['/v1/messages', 'anthropic', 'wrong', 'invalid_token'],
      ['/v1/messages', 'anthropic', 'revoked', 'key_revoked'],
      ['/v1/chat/completions', 'openai', 'none', 'missing_token'],
      ['/v1/chat/completions', 'openai', 'revoked', 'key_revoked'],
      ['/v1/responses', 'openai', 'wrong', 'invalid_token'],
      ['/v1/messages/count_tokens', 'anthropic', 'none', 'missing_token'],
      ['/v1/models', 'openai', 'wrong', 'invalid_token'],
    ] as const
  ).map(
    ([path, shape, key, code]): Case => ({
      name: `401 ${code} on ${path}`,
      method: path === '/v1/models' ? 'GET' : 'POST',
      path,
      auth: key === 'none' ? 'none' : shape,
      key: key === 'none' ? undefined : key,
      headers: shape === 'anthropic' ? ANTHROPIC_VERSION : {},
      body: path === '/v1/models' ? undefined : messages('haiku', 'hi'),
      status: 401,
      type: JSON_TYPE,
      routed: null,
      retry: 'false',
      versioned: false,
      error: { body: shape, code },
    }),
  ),
  // 403
  {
    name: '403 model_not_allowed on messages',
    path: '/v1/messages',
    auth: 'anthropic',
    key: 'capped',
    body: messages('sonnet', 'hi'),
    status: 403,
    type: JSON_TYPE,
    retry: 'false',
    error: { body: 'anthropic', code: 'model_not_allowed' },
  },
  {
    name: '403 model_not_allowed on chat',
    path: '/v1/chat/completions',
    auth: 'openai',
    key: 'capped',
    body: chat('sonnet', 'hi'),
    status: 403,
    type: JSON_TYPE,
    retry: 'false',
    error: { body: 'openai', code: 'model_not_allowed' },
  },
  // 404 and 405 on the provider paths
  ...(
    [
      ['POST', '/v1/messages/batches', 'anthropic', 404, 'not_found'],
      ['POST', '/v1/chat/completions/x', 'openai', 404, 'not_found'],
      ['GET', '/v1/responses/resp_1', 'openai', 404, 'not_found'],
      ['POST', '/v1/embeddings', 'openai', 404, 'not_found'],
      ['GET', '/v1/files', 'openai', 404, 'not_found'],
      ['GET', '/v1/messages', 'anthropic', 405, 'method_not_allowed'],
      ['GET', '/v1/chat/completions', 'openai', 405, 'method_not_allowed'],
      ['POST', '/v1/models', 'openai', 405, 'method_not_allowed'],
      ['DELETE', '/v1/models/openai:gpt-5-mini', 'openai', 405, 'method_not_allowed'],
    ] as const
  ).map(
    ([method, path, shape, status, code]): Case => ({
      name: `${status} ${method} ${path}`,
      method,
      path,
      auth: shape,
      body: method === 'POST' ? {} : undefined,
      status,
      type: JSON_TYPE,
      routed: null,
      retry: 'false',
      versioned: false,
      error: { body: shape, code },
    }),
  ),
  // 413 and 415
  ...(['anthropic', 'openai'] as const).flatMap((shape): Case[] => {
    const path = shape === 'anthropic' ? '/v1/messages' : '/v1/chat/completions';
    return [
      {
        name: `413 over the body limit on ${path}`,
        path,
        auth: shape,
        body: messages('haiku', 'x'.repeat(MAX_BODY_BYTES)),
        status: 413,
        type: JSON_TYPE,
        routed: null,
        retry: 'false',
        error: { body: shape, code: 'request_too_large' },
      },
      {
        name: `415 compressed body on ${path}`,
        path,
        auth: shape,
        headers: { 'content-encoding': 'gzip' },
        body: messages('haiku', 'hi'),
        status: 415,
        type: JSON_TYPE,
        routed: null,
        retry: 'false',
        error: { body: shape, code: 'unsupported_media_type' },
      },
    ];
  }),
  {
    name: '413 from the provider',
    path: '/v1/messages',
    auth: 'anthropic',
    body: messages('haiku', '[[fake:error=413]]'),
    status: 413,
    type: JSON_TYPE,
    routed: 'anthropic:claude-haiku-4-5',
    retry: 'false',
    error: { body: 'anthropic', code: 'request_too_large' },
  },
  {
    name: 'provider 422 is 400 upstream_invalid_request',
    path: '/v1/chat/completions',
    auth: 'openai',
    body: chat('openai:gpt-5', '[[fake:error=422]]'),
    status: 400,
    type: JSON_TYPE,
    routed: 'openai:gpt-5',
    retry: 'false',
    error: { body: 'openai', code: 'upstream_invalid_request' },
  },
  // 429
  ...(['anthropic', 'openai'] as const).map(
    (shape): Case => ({
      name: `429 quota_exceeded (${shape})`,
      path: shape === 'anthropic' ? '/v1/messages' : '/v1/chat/completions',
      auth: shape,
      key: 'capped',
      body: messages('haiku', 'hi'),
      status: 429,
      type: JSON_TYPE,
      routed: 'anthropic:claude-haiku-4-5',
      retry: 'false',
      error: { body: shape, code: 'quota_exceeded' },
    }),
  ),
  {
    name: '429 upstream_rate_limited with the provider hint',
    path: '/v1/messages',
    auth: 'anthropic',
    body: messages('haiku', '[[fake:error=429;retry-after=1]]', { stream: true }),
    status: 429,
    type: JSON_TYPE,
    routed: 'anthropic:claude-haiku-4-5',
    retry: 'true',
    retryAfter: '1',
    retryAfterMs: '1000',
    error: { body: 'anthropic', code: 'upstream_rate_limited' },
  },
  {
    name: '429 upstream_rate_limited without a hint',
    path: '/v1/responses',
    auth: 'openai',
    body: responses('openai:gpt-5', '[[fake:error=429]]'),
    status: 429,
    type: JSON_TYPE,
    routed: 'openai:gpt-5',
    retry: 'true',
    retryAfter: /^\d+$/,
    error: { body: 'openai', code: 'upstream_rate_limited' },
  },
  // 502
  {
    name: '502 upstream_error',
    path: '/v1/responses',
    auth: 'openai',
    body: responses('haiku', '[[fake:error=500]]'),
    status: 502,
    type: JSON_TYPE,
    routed: 'anthropic:claude-haiku-4-5',
    retry: 'false',
    error: { body: 'openai', code: 'upstream_error' },
  },
  {
    name: '502 upstream_auth_failed',
    path: '/v1/messages',
    auth: 'anthropic',
    body: messages('haiku', '[[fake:error=401]]'),
    status: 502,
    type: JSON_TYPE,
    routed: 'anthropic:claude-haiku-4-5',
    retry: 'false',
    error: { body: 'anthropic', code: 'upstream_auth_failed' },
  },
  // 503
  {
    name: '503 upstream_overloaded (529)',
    path: '/v1/messages',
    auth: 'anthropic',
    body: messages('haiku', '[[fake:error=529]]'),
    status: 503,
    type: JSON_TYPE,
    routed: 'anthropic:claude-haiku-4-5',
    retry: 'true',
    retryAfter: /^\d+$/,
    error: { body: 'anthropic', code: 'upstream_overloaded' },
  },
  {
    name: '503 upstream_overloaded (503)',
    path: '/v1/chat/completions',
    auth: 'openai',
    body: chat('openai:gpt-5', '[[fake:error=503]]', { stream: true }),
    status: 503,
    type: JSON_TYPE,
    routed: 'openai:gpt-5',
    retry: 'true',
    retryAfter: /^\d+$/,
    error: { body: 'openai', code: 'upstream_overloaded' },
  },
  ...(['anthropic', 'openai'] as const).map(
    (shape): Case => ({
      name: `503 routing_failed (${shape})`,
      path: shape === 'anthropic' ? '/v1/messages' : '/v1/chat/completions',
      auth: shape,
      body: messages('openrouter:google/gemini-2.5-flash', 'hi'),
      status: 503,
      type: JSON_TYPE,
      routed: null,
      retry: 'true',
      retryAfter: '1',
      error: { body: shape, code: 'routing_failed' },
    }),
  ),
  // 504
  {
    name: '504 upstream_timeout',
    path: '/v1/chat/completions',
    auth: 'openai',
    body: chat('haiku', '[[fake:hang]]'),
    status: 504,
    type: JSON_TYPE,
    routed: 'anthropic:claude-haiku-4-5',
    retry: 'false',
    error: { body: 'openai', code: 'upstream_timeout' },
  },
];

/**
 * Answers whose every header line is pinned, in order, as the client's bytes show them: a JSON answer, an
 * event stream and an error on each provider shape. `{id}` is the answer's request id (the same under its three
 * names), `{length}` its body's byte length; Node adds Date and Connection.
 */
interface Pinned {
  name: string;
  path: string;
  auth: 'anthropic' | 'openai';
  body: unknown;
  head: string[];
}

const ROUTED_HAIKU = 'svc-routed-model: anthropic:claude-haiku-4-5';
const ROUTED_MINI = 'svc-routed-model: openai:gpt-5-mini';
const IDS_JSON = ['content-type: application/json', 'request-id: {id}', 'svc-request-id: {id}'];
const IDS_SSE = [
  'cache-control: no-cache',
  'content-type: text/event-stream; charset=utf-8',
  'request-id: {id}',
  'svc-request-id: {id}',
];
const JSON_END = ['Content-Length: {length}', 'Date: {date}', 'Connection: close'];
const SSE_END = ['Date: {date}', 'Connection: close', 'Transfer-Encoding: chunked'];
const RATE_LIMITED = '[[fake:error=429;retry-after=1]]';
/** The head of a 429 carrying the provider's wait, on Haiku. */
const RATE_LIMITED_HEAD = [
  'HTTP/1.1 429 Too Many Requests',
  'content-type: application/json',
  'request-id: {id}',
  'retry-after: 1',
  'retry-after-ms: 1000',
  'svc-request-id: {id}',
  ROUTED_HAIKU,
  'x-request-id: {id}',
  'x-should-retry: true',
  ...JSON_END,
];

const PINNED: Pinned[] = [
  {
    name: 'messages JSON',
    path: '/v1/messages',
    auth: 'anthropic',
    body: messages('haiku', 'hi'),
    head: ['HTTP/1.1 200 OK', ...IDS_JSON, ROUTED_HAIKU, 'x-request-id: {id}', ...JSON_END],
  },
  {
    name: 'messages SSE translated, a parameter dropped',
    path: '/v1/messages',
    auth: 'anthropic',
    body: messages('openai:gpt-5-mini', 'hi', { stream: true, top_k: 5 }),
    head: [
      'HTTP/1.1 200 OK',
      'cache-control: no-cache',
      'content-type: text/event-stream; charset=utf-8',
      'request-id: {id}',
      'svc-dropped-params: top_k',
      'svc-request-id: {id}',
      ROUTED_MINI,
      'x-request-id: {id}',
      ...SSE_END,
    ],
  },
  {
    name: 'messages 429 with the provider hint',
    path: '/v1/messages',
    auth: 'anthropic',
    body: messages('haiku', RATE_LIMITED),
    head: RATE_LIMITED_HEAD,
  },
  {
    name: 'chat JSON translated, parameters dropped',
    path: '/v1/chat/completions',
    auth: 'openai',
    body: chat('haiku', 'hi', { seed: 3, logit_bias: { '1': 2 } }),
    head: [
      'HTTP/1.1 200 OK',
      'content-type: application/json',
      'request-id: {id}',
      'svc-dropped-params: seed, logit_bias',
      'svc-request-id: {id}',
      ROUTED_HAIKU,
      'x-request-id: {id}',
      ...JSON_END,
    ],
  },
  {
    name: 'chat SSE',
    path: '/v1/chat/completions',
    auth: 'openai',
    body: chat('openai:gpt-5-mini', 'hi', { stream: true }),
    head: ['HTTP/1.1 200 OK', ...IDS_SSE, ROUTED_MINI, 'x-request-id: {id}', ...SSE_END],
  },
  {
    name: 'chat 502 after routing',
    path: '/v1/chat/completions',
    auth: 'openai',
    body: chat('haiku', '[[fake:error=500]]', { stream: true }),
    head: [
      'HTTP/1.1 502 Bad Gateway',
      ...IDS_JSON,
      ROUTED_HAIKU,
      'x-request-id: {id}',
      'x-should-retry: false',
      ...JSON_END,
    ],
  },
  {
    name: 'responses JSON',
    path: '/v1/responses',
    auth: 'openai',
    body: responses('openai:gpt-5-mini', 'hi'),
    head: ['HTTP/1.1 200 OK', ...IDS_JSON, ROUTED_MINI, 'x-request-id: {id}', ...JSON_END],
  },
  {
    // a newer field is named in svc-dropped-params, and a name with characters no header carries (a line
    // break, a NUL, past U+00FF) is written with \u escapes, never a 500
    name: 'responses JSON translated, newer fields with names a header cannot carry as they are',
    path: '/v1/responses',
    auth: 'openai',
    body: responses('haiku', 'hi', { 'a\nb': 1, 'n\u0000\u4e2d\u00e9': 2 }),
    head: [
      'HTTP/1.1 200 OK',
      'content-type: application/json',
      'request-id: {id}',
      'svc-dropped-params: a\\u000ab, n\\u0000\\u4e2d\\u00e9',
      'svc-request-id: {id}',
      ROUTED_HAIKU,
      'x-request-id: {id}',
      ...JSON_END,
    ],
  },
  {
    name: 'responses SSE translated',
    path: '/v1/responses',
    auth: 'openai',
    body: responses('haiku', 'hi', { stream: true }),
    head: ['HTTP/1.1 200 OK', ...IDS_SSE, ROUTED_HAIKU, 'x-request-id: {id}', ...SSE_END],
  },
  {
    name: 'responses 400 before routing',
    path: '/v1/responses',
    auth: 'openai',
    body: '{not json',
    head: [
      'HTTP/1.1 400 Bad Request',
      ...IDS_JSON,
      'x-request-id: {id}',
      'x-should-retry: false',
      ...JSON_END,
    ],
  },
  {
    name: 'count_tokens JSON',
    path: '/v1/messages/count_tokens',
    auth: 'anthropic',
    body: { model: 'haiku', messages: [{ role: 'user', content: 'hi' }] },
    head: [
      'HTTP/1.1 200 OK',
      ...IDS_JSON,
      ROUTED_HAIKU,
      'svc-token-count: provider',
      'x-request-id: {id}',
      ...JSON_END,
    ],
  },
  {
    name: 'count_tokens 429 with the provider hint',
    path: '/v1/messages/count_tokens',
    auth: 'anthropic',
    body: { model: 'haiku', messages: [{ role: 'user', content: RATE_LIMITED }] },
    head: RATE_LIMITED_HEAD,
  },
];

test('every gateway answer carries its request id, routed model, retry advice, type and error shape', {
  timeout: 120_000,
}, async (t) => {
  const stack = await startGatewayStack({
    // no OpenRouter key, and the global default on OpenRouter: an OpenRouter model is 503 routing_failed
    providers: ['anthropic', 'openai'],
    env: {
      SVC_GATEWAY_GLOBAL_DEFAULT: 'openrouter:google/gemini-2.5-flash',
      SVC_GATEWAY_MAX_BODY_BYTES: String(MAX_BODY_BYTES),
      SVC_GATEWAY_MAX_RETRIES: '0',
      SVC_GATEWAY_UPSTREAM_TIMEOUT_MS: '2000',
    },
  });
  t.after(() => stack.stop());
  const { gw, files } = stack;
  const capped = await stack.issue([
    '--allow-model',
    'anthropic:claude-haiku-4-5',
    '--daily-cap-usd',
    '0.000001',
  ]);
  const revoked = await stack.issue();
  const revoke = await runSvc(['gateway', 'revoke-key', revoked.keyId], { env: files.env });
  assert.equal(revoke.code, 0, revoke.stderr);
  const tokens = { main: stack.token, capped: capped.token, revoked: revoked.token, wrong: 'gw_wrong' };

  for (const c of CASES) {
    await t.test(c.name, async () => {
      const headers: Record<string, string> = { ...(c.headers ?? {}) };
      const token = tokens[c.key ?? 'main'];
      if (c.auth === 'anthropic') Object.assign(headers, ANTHROPIC_VERSION, { 'x-api-key': token });
      if (c.auth === 'openai') headers.authorization = `Bearer ${token}`;
      if (c.body !== undefined) headers['content-type'] ??= 'application/json';
      const res = await fetch(`${gw.url}${c.path}`, {
        method: c.method ?? (c.body === undefined ? 'GET' : 'POST'),
        headers,
        body: c.body === undefined ? undefined : typeof c.body === 'string' ? c.body : JSON.stringify(c.body),
      });
      const text = await res.text();
      const h = res.headers;
      assert.equal(res.status, c.status, text);
      if (c.status !== 204) assert.match(h.get('content-type') ?? '', c.type);

      const id = h.get('svc-request-id');
      assert.match(id ?? '', /^[0-9A-HJKMNP-TV-Z]{26}$/, 'svc-request-id');
      assert.equal(h.get('request-id'), id);
      assert.equal(h.get('x-request-id'), id);

      if (c.routed !== undefined) assert.equal(h.get('svc-routed-model'), c.routed);
      // a success never advises on retries
      const retry = c.retry !== undefined ? c.retry : c.status < 400 ? null : undefined;
      if (retry !== undefined) assert.equal(h.get('x-should-retry'), retry);
      if (retry === 'true') {
        // a retryable answer always says when (issue 13)
        const after = h.get('retry-after') ?? '';
        if (typeof c.retryAfter === 'string') assert.equal(after, c.retryAfter);
        else assert.match(after, c.retryAfter ?? /^\d+$/);
        if (c.retryAfterMs) assert.equal(h.get('retry-after-ms'), c.retryAfterMs);
      }
      if (c.versioned === true) {
        assert.ok(h.get('svc-api-version'), 'Svc-API-Version');
        assert.equal(h.get('svc-api-versions-supported'), '1.0');
      } else if (c.versioned === false || c.path.startsWith('/v1/')) {
        // provider paths never stamp the service's version (spec 1 §Versioning)
        assert.equal(h.get('svc-api-version'), null);
        assert.equal(h.get('svc-api-versions-supported'), null);
      }
      for (const [name, value] of Object.entries(c.also ?? {})) assert.equal(h.get(name), value, name);

      if (c.error) {
        const body = JSON.parse(text) as Record<string, any>;
        const error = body.error as Record<string, unknown>;
        assert.equal(error.code, c.error.code, text);
        assert.equal(typeof error.message, 'string');
        if (c.error.body === 'anthropic') {
          assert.equal(body.type, 'error');
          assert.equal(typeof error.type, 'string');
          assert.equal(body.request_id, id);
        } else if (c.error.body === 'openai') {
          assert.deepEqual(Object.keys(body), ['error']);
          assert.equal(typeof error.type, 'string');
          assert.equal(error.param, null);
        } else {
          assert.deepEqual(Object.keys(body), ['error']);
          assert.equal(error.type, undefined);
        }
        if (c.error.code === 'key_revoked') {
          assert.equal(error.key_id, revoked.keyId);
          assert.equal(typeof error.revoked_at, 'string');
        }
      } else if (c.status === 200 && c.type === SSE_TYPE) {
        assert.ok(text.length > 0, 'a stream with events');
      }
    });
  }

  for (const p of PINNED) {
    await t.test(`every header line of ${p.name}`, async () => {
      const body = typeof p.body === 'string' ? p.body : JSON.stringify(p.body);
      const auth =
        p.auth === 'anthropic'
          ? `anthropic-version: 2023-06-01\r\nx-api-key: ${stack.token}`
          : `authorization: Bearer ${stack.token}`;
      const raw = await rawExchange(
        gw.port,
        `POST ${p.path} HTTP/1.1\r\nhost: 127.0.0.1:${gw.port}\r\n${auth}\r\ncontent-type: application/json\r\n` +
          `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      const end = raw.indexOf('\r\n\r\n');
      const head = raw.slice(0, end).split('\r\n');
      const id = /^svc-request-id: (.+)$/m.exec(raw.slice(0, end))?.[1] ?? '';
      assert.match(id, /^[0-9A-HJKMNP-TV-Z]{26}$/, raw.slice(0, end));
      const date = /^Date: (.+)$/m.exec(raw.slice(0, end))?.[1] ?? '';
      const length = String(Buffer.byteLength(raw.slice(end + 4)));
      const expected = p.head.map((line) =>
        line.replaceAll('{id}', id).replace('{length}', length).replace('{date}', date),
      );
      assert.deepEqual(head, expected);
    });
  }
});
