/**
 * @module Meta endpoints of spec 2: GET /health, GET /server/version, GET /models (registry entries with
 * their availability: no provider key, or the provider's refusal of the model, model-availability.ts) and the routing policy's view, check and reload.
 */
import type { Hono } from 'hono';
import * as v from 'valibot';
import { CANONICAL_MESSAGE_SCHEMA_VERSION } from '../canonical/message.ts';
import { EVENTS_SCHEMA_VERSION } from '../events/catalog.ts';
import { readJsonBody } from '../http/json-body.ts';
import { validateInput } from '../http/validation.ts';
import { errorMessage } from '../lib/errors.ts';
import { formatUs } from '../lib/time.ts';
import type { ModelEntry } from '../models/model-schema.ts';
import { ROUTING_POLICY_SCHEMA_VERSION } from '../routing/policy-schema.ts';
import type { AgentAppDeps } from './app.ts';
import type { AgentEnv } from './env.ts';
import { createModelAvailabilityView } from './model-availability.ts';
import { countOpenSessions } from './sessions/store.ts';

/** spec 2 Resources: Model entry `availability`. */
export type ModelAvailability = 'healthy' | 'model_unavailable' | 'provider_unavailable';

const CheckSchema = v.object({
  // null is absent (the file on disk), like the other optional fields
  policy_yaml: v.nullish(v.string('must be the routing.yaml text as a string')),
});

export function mountMetaRoutes(app: Hono<AgentEnv>, deps: AgentAppDeps): void {
  const activeSessions = lastGoodSessionCount(deps);
  app.get('/health', async (c) => {
    const nowUs = deps.clock.nowUs();
    return c.json({
      status: 'ok',
      started_at: formatUs(deps.startedAtUs),
      uptime_seconds: Math.max(0, Math.round((nowUs - deps.startedAtUs) / 1000) / 1000),
      active_sessions: await activeSessions(),
      active_turns: deps.engine?.activeTurns() ?? 0,
    });
  });

  app.get('/server/version', (c) =>
    c.json({
      version: deps.serverVersion,
      schema_versions: {
        canonical_message: CANONICAL_MESSAGE_SCHEMA_VERSION,
        events: EVENTS_SCHEMA_VERSION,
        routing_policy: ROUTING_POLICY_SCHEMA_VERSION,
      },
    }),
  );

  const availability = createModelAvailabilityView(deps);
  app.get('/models', async (c) => {
    const unavailable = await availability.unavailableModels();
    return c.json({
      models: deps.registry.list().map((m) => encodeModel(m, availabilityOf(m, deps, unavailable))),
    });
  });

  app.get('/routing/policy', (c) => c.json(deps.policy.view()));

  app.post('/routing/check', async (c) => {
    const body = validateInput(CheckSchema, await readJsonBody(c, { optional: true }));
    const { valid, errors, warnings } = deps.policy.check(body.policy_yaml ?? undefined);
    return c.json({ valid, errors, warnings });
  });

  app.post('/routing/reload', async (c) => {
    await readJsonBody(c, { optional: true }); // no body is read, but a non-JSON one is 415 like everywhere
    const { version, valid } = deps.policy.reload();
    const view = deps.policy.view();
    deps.log.info('routing policy reloaded', { version, valid, in_force: view.version });
    return c.json(
      valid ? { version, valid } : { version, valid, errors: view.errors, using_last_known_good: true },
    );
  });
}

// --- internal ---

/** How long GET /health waits for the store's session count before it answers with the last one. */
const HEALTH_COUNT_WAIT_MS = 1000;

/**
 * The open-session count for GET /health, which is 200 whenever the server runs (spec 2: 503 only during
 * shutdown): while the store cannot answer (PostgreSQL restarting or unreachable, a hung server) it gives
 * the last count read, after at most HEALTH_COUNT_WAIT_MS, so a liveness probe does not restart a server
 * that is only waiting for its database. The outage is logged once, and its end.
 */
function lastGoodSessionCount(deps: AgentAppDeps): () => Promise<number> {
  let last = 0;
  let away = false;
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), HEALTH_COUNT_WAIT_MS);
    });
    const count = countOpenSessions(deps.db);
    try {
      const n = await Promise.race([count, late]);
      if (n === 'late') throw new Error(`no answer in ${HEALTH_COUNT_WAIT_MS} ms`);
      if (away) deps.log.info('GET /health reads the session count from the store again');
      away = false;
      last = n;
    } catch (err) {
      count.catch(() => undefined); // a count that fails after the wait is not an unhandled rejection
      if (!away)
        deps.log.warn('GET /health cannot read the session count; it answers with the last one read', {
          message: errorMessage(err),
        });
      away = true;
    } finally {
      clearTimeout(timer);
    }
    return last;
  };
}

/** No key for the adapter comes first: then no call can have told anything about the model. */
function availabilityOf(
  model: ModelEntry,
  deps: AgentAppDeps,
  unavailable: ReadonlySet<string>,
): ModelAvailability {
  if (!deps.availableAdapters.has(model.adapter)) return 'provider_unavailable';
  return unavailable.has(model.id) ? 'model_unavailable' : 'healthy';
}

function encodeModel(m: ModelEntry, availability: ModelAvailability) {
  return {
    id: m.id,
    adapter: m.adapter,
    tier: m.tier,
    can_delegate: m.can_delegate,
    aliases: [...m.aliases],
    capabilities: { ...m.capabilities },
    availability,
  };
}
