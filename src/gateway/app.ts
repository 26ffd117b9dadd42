/**
 * @module The gateway's Hono app: request id + request log → version-header stamp (service-owned paths) →
 * Host/Origin check → versioning → routes. The provider-shape routes pick their shape, authenticate, then call
 * the injected pipeline handlers; everything else is 404.
 */
import { type Context, type Handler, Hono, type MiddlewareHandler } from 'hono';
import type { Bus } from '../events/bus.ts';
import type { InboundShape } from '../events/catalog.ts';
import { createHealthHandler } from '../http/health.ts';
import { hostRefusal } from '../http/host-check.ts';
import type { RefusalOptions } from '../http/listen.ts';
import { createAllowLookup } from '../http/method-not-allowed.ts';
import { type HeaderReader, requestHeaders } from '../http/request-headers.ts';
import { createRequestLogFinish } from '../http/request-log.ts';
import { wasCutOffByStop } from '../http/stop-cut-off.ts';
import {
  createVersioning,
  createVersionStamp,
  defaultVersionHeaders,
  isProviderOrMetricsPath,
} from '../http/versioning.ts';
import { isSvcError, SvcError, shouldRetryFor } from '../lib/errors.ts';
import type { NewId } from '../lib/ids.ts';
import type { Logger } from '../lib/log.ts';
import type { Clock } from '../lib/time.ts';
import { isStreamAnswer, jsonAnswer, keepsAnswerHeaders, setAnswerHeader } from './answer.ts';
import { createAuth } from './auth.ts';
import type { GatewayEnv } from './env.ts';
import { encodeGatewayError } from './errors.ts';
import type { KeystoreCache } from './keystore/file.ts';
import { REQUEST_ID_HEADER_NAMES, requestIdHeaders } from './pipeline.ts';

/** A sub-app mounted before authentication (no token needed), e.g. `{ path: '/metrics', app }`. */
export interface ExtraRoute {
  path: string;
  app: Hono<any>;
}

export interface GatewayAppDeps {
  keys: KeystoreCache;
  bus: Bus;
  clock: Clock;
  newId: NewId;
  log: Logger;
  /** Extra Host names from SVC_ALLOWED_HOSTS (loopback names are always allowed). */
  allowedHosts?: readonly string[];
  /** Where request-log lines go (stdout in `svc gateway`); omitted: no request log. */
  writeRequestLog?: (line: string) => void;
  startedAtMs?: number;
  /** POST /v1/messages after auth; `c.var.gatewayKey`, `shape`, `requestId` are set. Default: 501. */
  handleMessages?: Handler<GatewayEnv>;
  /** POST /v1/chat/completions after auth. Default: 501. */
  handleChatCompletions?: Handler<GatewayEnv>;
  /** POST /v1/responses after auth. Default: 501. */
  handleResponses?: Handler<GatewayEnv>;
  /** POST /v1/messages/count_tokens after auth. Default: 501. */
  handleCountTokens?: Handler<GatewayEnv>;
  /** GET /v1/models after auth; shape is `anthropic` when `anthropic-version` is sent. Default: 501. */
  handleModels?: Handler<GatewayEnv>;
  /** GET /v1/models/{model} (the rest of the path, slashes included) after auth, shaped as the list. Default: 501. */
  handleModel?: Handler<GatewayEnv>;
  /** Unauthenticated routes such as /metrics (DECISIONS §4 endpoints). */
  extraRoutes?: readonly ExtraRoute[];
}

export function createGatewayApp(deps: GatewayAppDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.use(frontMiddleware(deps));

  // /healthz is the gateway's only service-owned path it serves (spec 1 §Versioning); every other path
  // outside /v1/* and /metrics (analytics, sessions… and unknown ones, `/healthz/` too) answers 404 with the
  // version headers, as on svc serve
  app.use(createVersioning({ log: deps.log }));
  app.get('/healthz', createHealthHandler({ startedAtMs: deps.startedAtMs ?? Date.now() }));
  for (const extra of deps.extraRoutes ?? []) app.route(extra.path, extra.app);

  const auth = createAuth(deps);
  app.post('/v1/messages', guard(auth, 'anthropic'), deps.handleMessages ?? notYet);
  app.post('/v1/messages/count_tokens', guard(auth, 'anthropic'), deps.handleCountTokens ?? notYet);
  app.post('/v1/chat/completions', guard(auth, 'openai'), deps.handleChatCompletions ?? notYet);
  app.post('/v1/responses', guard(auth, 'openai_responses'), deps.handleResponses ?? notYet);
  app.get('/v1/models', guard(auth), deps.handleModels ?? notYet);
  app.get(MODEL_PATH, guard(auth), deps.handleModel ?? notYet);
  // any other method on a provider path: 405 in that provider's error shape (issue 13)
  for (const [path, allow] of METHODS) app.all(path, methodNotAllowed(allow));

  // another method on a path a route serves (/healthz, /metrics) is 405 with Allow, as on svc serve
  const allowOf = createAllowLookup(app);
  app.notFound((c) => {
    const allow = allowOf(c.req.path);
    if (allow.length > 0) {
      setAnswerHeader(c, 'allow', allow.join(', '));
      return respond(
        c,
        new SvcError('method_not_allowed', {
          message: `${c.req.method} is not allowed on ${c.req.path}; use ${allow.join(' or ')}.`,
          details: { allow },
        }),
      );
    }
    return respond(
      c,
      new SvcError('not_found', { message: `No route for ${c.req.method} ${c.req.path} on the gateway.` }),
    );
  });
  app.onError((err, c) => {
    if (isSvcError(err) && (err.code === 'cancelled' || err.code === 'service_shutting_down')) {
      // the client left, or the stop cut the request off (answered 503 when it could be): not a gateway failure
      if (wasCutOffByStop(c.env?.outgoing)) {
        deps.log.info('request cut off by the stop before its answer', { request_id: c.get('requestId') });
      } else if (err.code === 'cancelled') {
        deps.log.info('client disconnected before the answer', {
          request_id: c.get('requestId'),
          message: err.message,
        });
      }
    }
    return respond(c, isSvcError(err) ? err : internal(err, deps.log, c));
  });
  return app;
}

/**
 * The answers to requests Node refuses before the app sees them (listen.ts): each has a request id under
 * the three names the app's answers use, says `x-should-retry` (true on 408: nothing went upstream; false
 * on 400/431), carries the version headers when its path is known to be a service path, and is logged in
 * the request log.
 */
export function gatewayRefusals(newId: NewId, writeRequestLog?: (line: string) => void): RefusalOptions {
  return {
    newRequestId: () => newId(),
    headers: (err, id, path) => ({
      ...(id ? requestIdHeaders(id) : {}),
      'x-should-retry': String(shouldRetryFor(err.code) ?? false),
      // as the app's answers: a service path carries the version headers, /v1/* and /metrics never
      ...(path !== undefined && !isProviderOrMetricsPath(path) ? defaultVersionHeaders() : {}),
    }),
    // the path's error body, as the app's answers have it (/v1/models: the OpenAI one, no headers read)
    encode: (err, id, path) =>
      encodeGatewayError(path === undefined ? undefined : resolveShape(path, NO_HEADERS), err, id),
    ...(writeRequestLog ? { writeRequestLog } : {}),
  };
}

const NO_HEADERS: HeaderReader = { get: () => null };

/** The shape of a path: from the route, or under /v1/models from the `anthropic-version` header. */
export function resolveShape(path: string, headers: HeaderReader): InboundShape | undefined {
  // every path under /v1/messages answers in the Anthropic shape, 404 and 405 included (issue 13)
  if (path === '/v1/messages' || path.startsWith('/v1/messages/')) return 'anthropic';
  if (path === '/v1/chat/completions' || path.startsWith('/v1/chat/completions/')) return 'openai';
  // a stored-response path (`GET /v1/responses/{id}`) is not served, but answers as the OpenAI SDK expects
  if (path === '/v1/responses' || path.startsWith('/v1/responses/')) return 'openai_responses';
  // one model (`GET /v1/models/{id}`, the SDKs' models.retrieve) answers in the list's shape
  if (path === '/v1/models' || path.startsWith('/v1/models/'))
    return headers.get('anthropic-version') !== null ? 'anthropic' : 'openai';
  // any other provider-style path (`/v1/embeddings`, `/v1/files`…) is not served: its 404 is in the OpenAI
  // shape, the API those paths belong to, with `x-should-retry: false` like every provider-path 404
  if (path.startsWith('/v1/')) return 'openai';
  return undefined;
}

// --- internal ---

/**
 * The app's first middleware, one async frame for what runs around every request (issue 13: each
 * middleware mounted on its own added an async frame and a dispatch per request), in this order: the
 * request id, the request log's timing and line, the version-header stamp, the Host/Origin check.
 *
 * Every answer names its request: `svc-request-id` (the trace's turn_id), also under the names the SDKs
 * read into `_request_id` (Anthropic `request-id`, OpenAI `x-request-id`), so the id a client logs is the
 * one to look up in the trace. The Host/Origin 403 comes before versioning but still carries the version
 * headers on service paths (spec 1: "always"); /v1/* and /metrics stay without them.
 */
function frontMiddleware(deps: GatewayAppDeps): MiddlewareHandler<GatewayEnv> {
  const allowed = deps.allowedHosts ?? [];
  const stampVersion = createVersionStamp();
  const finishLog = deps.writeRequestLog
    ? createRequestLogFinish({
        write: deps.writeRequestLog,
        fields: logFields,
        isEventStream: isStreamAnswer,
      })
    : undefined;
  return async function front(c, next) {
    const id = deps.newId();
    c.set('requestId', id);
    if (keepsAnswerHeaders(c.req.path)) c.set('answerHeaders', requestIdHeaders(id));
    else for (const name of REQUEST_ID_HEADER_NAMES) c.header(name, id);
    const started = performance.now();
    try {
      const refusal = hostRefusal(requestHeaders(c), allowed);
      // answered as the app's onError answers a thrown refusal
      if (refusal) c.res = respond(c, refusal);
      else await next();
      stampVersion(c);
    } finally {
      finishLog?.(c, started);
    }
  };
}

/** A provider route's shape (fixed, or under /v1/models from `anthropic-version`), then authentication. */
function guard(auth: (c: Context<GatewayEnv>) => void, fixed?: InboundShape): MiddlewareHandler<GatewayEnv> {
  return function guarded(c, next) {
    c.set('shape', fixed ?? resolveShape(c.req.path, requestHeaders(c)) ?? 'openai');
    auth(c);
    return next();
  };
}

function respond(c: Context<GatewayEnv>, err: SvcError): Response {
  const { status, body, headers } = encodeGatewayError(shapeOf(c), err, c.get('requestId'));
  c.set('errorCode', err.code);
  return jsonAnswer(c, JSON.stringify(body), status, headers);
}

function shapeOf(c: Context<GatewayEnv>): InboundShape | undefined {
  return c.get('shape') ?? resolveShape(c.req.path, requestHeaders(c));
}

/** One model of the list: `/v1/models/` and the rest of the path, slashes included (canonical ids hold them). */
const MODEL_PATH = '/v1/models/:model{.+}';

/** Provider paths and the methods they answer. */
const METHODS: ReadonlyArray<readonly [string, string]> = [
  ['/v1/messages', 'POST'],
  ['/v1/messages/count_tokens', 'POST'],
  ['/v1/chat/completions', 'POST'],
  ['/v1/responses', 'POST'],
  ['/v1/models', 'GET'],
  [MODEL_PATH, 'GET'],
];

function methodNotAllowed(allow: string): Handler<GatewayEnv> {
  return (c) => {
    setAnswerHeader(c, 'allow', allow);
    throw new SvcError('method_not_allowed', {
      message: `${c.req.method} is not allowed on ${c.req.path}; use ${allow}.`,
    });
  };
}

const notYet: Handler<GatewayEnv> = () => {
  throw new SvcError('not_implemented', {
    message: 'This endpoint is not implemented yet in this version of svc.',
  });
};

function logFields(c: Context, line: Record<string, unknown>): void {
  const g = c as Context<GatewayEnv>;
  line.request_id = g.get('requestId') ?? null;
  line.key_id = g.get('gatewayKey')?.key_id ?? null;
  line.shape = shapeOf(g) ?? null;
  line.model = g.get('model') ?? null;
  line.routed_model = g.get('routedModel') ?? null;
  line.routed_by = g.get('routedBy') ?? null;
  // the failed answer's code (quota_exceeded, upstream_rate_limited…): what went wrong, without the body
  line.error_code = g.get('errorCode') ?? null;
  const droppedTools = g.get('droppedTools');
  if (droppedTools) line.dropped_tools = droppedTools;
  const droppedParams = g.get('droppedParams');
  if (droppedParams) line.dropped_params = droppedParams;
}

function internal(err: unknown, log: Logger, c: Context<GatewayEnv>): SvcError {
  log.error('unhandled error in the gateway', { request_id: c.get('requestId'), error: err });
  return new SvcError('internal_error', {
    message: 'The gateway failed to answer this request.',
    cause: err,
  });
}
