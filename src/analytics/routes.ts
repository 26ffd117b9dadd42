/**
 * @module The /analytics namespace of spec 3 on the agent server: read-only endpoints over the trace and
 * session store in the analytics envelope, the per-user export stream and forget. The host app supplies
 * the Host/Origin check, versioning headers and the service error body.
 */
import type { Env, Hono } from 'hono';
import { sql } from 'kysely';
import type { Bus } from '../events/bus.ts';
import type { NodeBindings } from '../http/incoming.ts';
import { readJsonBody } from '../http/json-body.ts';
import type { Logger } from '../lib/log.ts';
import type { Clock } from '../lib/time.ts';
import type { ModelRegistry } from '../models/registry.ts';
import type { Store } from '../store/open.ts';
import { runLongStatements } from '../store/statement-bounds.ts';
import { envelope } from './envelope.ts';
import { assertUserId } from './identity.ts';
import { stringifyAnswer as answerJson } from './money.ts';
import {
  parseGatewayKey,
  parseGroupBy,
  parseSessionOrder,
  parseSessionsLimit,
  parseSpendFilters,
  parseTeam,
  parseWindow,
  type RawParams,
  singleValued,
} from './params.ts';
import { queryByKey } from './queries/by-key.ts';
import { queryByTeam } from './queries/by-team.ts';
import { queryCacheEffectiveness } from './queries/cache-effectiveness.ts';
import { queryCost } from './queries/cost.ts';
import { queryReliability } from './queries/reliability.ts';
import { queryRouting } from './queries/routing.ts';
import { querySavings } from './queries/savings.ts';
import { querySessions } from './queries/sessions.ts';
import { queryTurn } from './queries/turn.ts';
import { createExportResponse } from './user-data/export-response.ts';
import { runForgetUser } from './user-data/forget.ts';
import { resolveWindow } from './window.ts';

export interface AnalyticsDeps {
  store: Store;
  bus: Pick<Bus, 'publish' | 'stamp' | 'deliverStored'>;
  clock: Clock;
  registry: ModelRegistry;
  log: Logger;
  /** Commits queued trace events, so an export or forget sees everything published before it. */
  flushEvents?: () => Promise<void>;
}

/** The envelopes are written by answerJson, so that money fields are exact (money.ts). */
const JSON_TYPE = { 'content-type': 'application/json' };

export function mountAnalyticsRoutes<E extends Env>(app: Hono<E>, deps: AnalyticsDeps): void {
  const db = deps.store.kysely;
  const pricing = () => deps.registry.pricingVersion;
  // a report over a long window of a large store may take minutes on PostgreSQL: not cut off at the
  // request path's bound (a hung server still answers 503 store_unavailable, after LONG_STATEMENT_MS)
  app.use('/analytics/*', (_c, next) => runLongStatements(next));
  /** Parses the window, runs `read`, and answers the envelope. */
  const windowed = <T>(
    path: string,
    read: (raw: RawParams, window: ReturnType<typeof parseWindow>) => Promise<T>,
  ) =>
    app.get(`/analytics/${path}`, async (c) => {
      const raw = singleValued(c.req.queries());
      const window = parseWindow(raw, deps.clock.nowUs());
      return c.body(answerJson(envelope(window, pricing(), await read(raw, window))), 200, JSON_TYPE);
    });

  windowed('cost', (raw, window) =>
    queryCost(db, { window, groupBy: parseGroupBy(raw), filters: parseSpendFilters(raw) }),
  );
  windowed('cache_effectiveness', (_raw, window) => queryCacheEffectiveness(db, window));
  windowed('routing', (_raw, window) => queryRouting(db, window));
  windowed('reliability', (_raw, window) => queryReliability(db, window));
  windowed('savings', (raw, window) => querySavings(db, deps.registry, { window, baseline: raw.baseline }));
  windowed('by_key', (raw, window) => queryByKey(db, { window, gatewayKey: parseGatewayKey(raw) }));
  windowed('by_team', (raw, window) => queryByTeam(db, { window, team: parseTeam(raw) }));

  app.get('/analytics/sessions', async (c) => {
    const raw = singleValued(c.req.queries());
    const q = { order: parseSessionOrder(raw), limit: parseSessionsLimit(raw) };
    return c.body(answerJson(envelope(null, pricing(), await querySessions(db, q))), 200, JSON_TYPE);
  });

  app.get('/analytics/turns/:turn_id', async (c) => {
    const data = await queryTurn(db, c.req.param('turn_id'), deps.clock.nowUs());
    return c.body(answerJson(envelope(null, pricing(), data)), 200, JSON_TYPE);
  });

  // an empty id matches no `:user_id`: it fails the shape guard like any other bad id (400, not a 404)
  const emptyUserId = (): Response => {
    assertUserId('');
    throw new Error('unreachable: the empty user id passed the shape guard');
  };
  app.get('/analytics/user//export', emptyUserId);
  app.post('/analytics/user//forget', emptyUserId);

  app.get('/analytics/user/:user_id/export', async (c) => {
    const userId = assertUserId(c.req.param('user_id'));
    const raw = singleValued(c.req.queries());
    const window = resolveWindow({ from: raw.from, to: raw.to }); // default: all time
    await flushReachable(deps);
    const exportDeps = { store: deps.store, bus: deps.bus, log: deps.log, actor: 'user' as const };
    return createExportResponse(exportDeps, { userId, window }, c.env as NodeBindings | undefined, {
      headersOnly: c.req.method === 'HEAD',
    });
  });

  app.post('/analytics/user/:user_id/forget', async (c) => {
    const userId = assertUserId(c.req.param('user_id'));
    await readJsonBody(c, { optional: true }); // no body is read, but a form post must not forget anyone: 415
    await flushReachable(deps);
    const r = await runForgetUser({ ...deps, actor: 'user' }, userId);
    if (r.walTruncated === false)
      deps.log.warn(
        'forget: another reader kept the WAL busy; old pages may hold the original id until the next checkpoint',
        {
          pseudonym: r.pseudonym,
        },
      );
    return c.json({
      user_id: r.user_id,
      pseudonym: r.pseudonym,
      pseudonymized_rows: r.pseudonymized_rows,
      completed_at: r.completed_at,
    });
  });
}

// --- internal ---

/**
 * The trace flushed before an export or a forget reads it, once the store answered a first statement: while
 * PostgreSQL is away the flush would wait out the trace writer's retry window (up to 60 s) before the
 * request failed anyway; the statement's failure is 503 store_unavailable at once instead.
 */
async function flushReachable(deps: Pick<AnalyticsDeps, 'store' | 'flushEvents'>): Promise<void> {
  if (!deps.flushEvents) return;
  await sql`SELECT 1`.execute(deps.store.kysely);
  await deps.flushEvents();
}
