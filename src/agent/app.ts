/**
 * @module The agent server's Hono app (spec 2): version-header stamp (for the two refusals below) → Host/Origin
 * check → shutdown gate → request log → /metrics (no version headers) → versioning → session, history, turn,
 * meta, WebSocket-handshake, /analytics and /dashboard/ routes.
 * Errors use the service body; unknown paths are a JSON 404, a wrong method on a known one a 405. No CORS
 * headers: a foreign page must not drive this server.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import type { Kysely } from 'kysely';
import { mountAnalyticsRoutes, mountDashboard } from '../analytics/index.ts';
import type { Bus } from '../events/bus.ts';
import { createHostCheck } from '../http/host-check.ts';
import { createServiceNotFound } from '../http/method-not-allowed.ts';
import { createRequestLog } from '../http/request-log.ts';
import { createServiceErrorHandler } from '../http/service-errors.ts';
import { createVersionHeaderStamp, createVersioning } from '../http/versioning.ts';
import { SvcError } from '../lib/errors.ts';
import type { NewId } from '../lib/ids.ts';
import type { Logger } from '../lib/log.ts';
import type { Clock } from '../lib/time.ts';
import type { MetricsCollector } from '../metrics/collector.ts';
import { createMetricsApp } from '../metrics/route.ts';
import type { ModelRegistry } from '../models/registry.ts';
import type { PolicyStore } from '../routing/load-policy.ts';
import type { Store } from '../store/open.ts';
import type { Database } from '../store/schema.ts';
import type { AgentEnv } from './env.ts';
import { mountMetaRoutes } from './routes-meta.ts';
import type { AttachTokens } from './sessions/attach-tokens.ts';
import { mountHistoryRoutes } from './sessions/history-routes.ts';
import { mountSessionRoutes } from './sessions/routes.ts';
import type { TurnEndWatch } from './sessions/turn-end-watch.ts';
import type { TurnEngine } from './turns/engine.ts';
import { mountTurnRoutes } from './turns/routes.ts';
import type { StreamServer } from './ws/stream-server.ts';

export interface AgentAppDeps {
  db: Kysely<Database>;
  /** The trace store behind `db` (the /analytics export and forget read and compact it). */
  store: Store;
  bus: Bus;
  clock: Clock;
  newId: NewId;
  log: Logger;
  registry: ModelRegistry;
  policy: PolicyStore;
  /** Adapters that have a provider key (GET /models availability). */
  availableAdapters: ReadonlySet<string>;
  /** The turn machinery; absent in a build without it (turn routes and PATCH answer 501). */
  engine?: TurnEngine;
  attachTokens: AttachTokens;
  turnEnds: TurnEndWatch;
  metrics: Pick<MetricsCollector, 'scrape' | 'contentType'>;
  /** Extra Host names from SVC_ALLOWED_HOSTS (loopback names are always allowed). */
  allowedHosts?: readonly string[];
  /** Where request-log lines go (stdout in `svc serve`); omitted: no request log. */
  writeRequestLog?: (line: string) => void;
  startedAtUs: number;
  /** True once shutdown began: every request is 503 service_shutting_down (spec 2 item 6). */
  isShuttingDown?: () => boolean;
  /** The svc package version (GET /server/version). */
  serverVersion: string;
  /** Commits queued trace events (before a purge deletes a session's rows). */
  flushEvents?: () => Promise<void>;
  /** `host:port` the server listens on, for ws_url when a request carries no Host. */
  boundAuthority?: () => string;
  /** A session was ended or purged (the stream server closes its sockets). */
  onSessionEnded?: (sessionId: string) => void;
  /** The WebSocket stream (ws/stream-server.ts); mounts GET /sessions/{id}/stream. */
  stream?: Pick<StreamServer, 'mount'>;
}

export function createAgentApp(deps: AgentAppDeps): Hono<AgentEnv> {
  const app = new Hono<AgentEnv>();
  // the Host/Origin 403 and the shutdown 503 come first but still carry the version headers (spec 1)
  app.use(createVersionHeaderStamp());
  app.use(createHostCheck({ allowedHosts: deps.allowedHosts ?? [] }));
  app.use(shutdownGate(deps.isShuttingDown ?? (() => false)));
  if (deps.writeRequestLog) app.use(createRequestLog({ write: deps.writeRequestLog }));
  // spec 1 §GET /metrics, DECISIONS §5: no version headers, never 410
  app.route('/metrics', createMetricsApp(deps.metrics));
  app.use(createVersioning({ log: deps.log }));
  mountSessionRoutes(app, deps);
  mountHistoryRoutes(app, deps);
  mountTurnRoutes(app, deps);
  mountMetaRoutes(app, deps);
  deps.stream?.mount(app, deps);
  mountAnalyticsRoutes(app, deps);
  mountDashboard(app);
  // a known path with another method is 405 with Allow, an unknown one 404 (README §REST API)
  app.notFound(createServiceNotFound(app));
  app.onError(createServiceErrorHandler({ log: deps.log }));
  return app;
}

// --- internal ---

function shutdownGate(isShuttingDown: () => boolean): MiddlewareHandler<AgentEnv> {
  return async function shutdown(c, next) {
    if (isShuttingDown()) {
      c.header('connection', 'close');
      throw new SvcError('service_shutting_down', {
        message: 'The agent server is shutting down; retry once it is back.',
      });
    }
    await next();
  };
}
