/**
 * @module Slot 4 for a server: the learned table in memory, rebuilt in the background at start, every
 * SVC_PATTERN_REFRESH_MS and after each POST /routing/reload, never on a request's path (the statistics are
 * read by a worker thread on SQLite, over the pool on PostgreSQL). The hook a request calls only reads the
 * table in force.
 */
import type { SvcEnv } from '../../config/env.ts';
import { positiveInt } from '../../config/env-numbers.ts';
import { errorMessage } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import type { Clock } from '../../lib/time.ts';
import type { Store } from '../../store/open.ts';
import { busyTimeoutOf } from '../../store/sqlite.ts';
import type { SlotHooks } from '../facts.ts';
import type { PolicyStore } from '../load-policy.ts';
import type { PatternConfig } from './config.ts';
import { createPostgresStatsReader } from './stats-query-postgres.ts';
import { createWorkerStatsReader, type StatsReader } from './stats-worker.ts';
import {
  buildPatternTable,
  emptyPatternTable,
  lookupPattern,
  type PatternMatch,
  type PatternTable,
} from './table.ts';

/** SVC_PATTERN_REFRESH_MS default: one minute. */
export const DEFAULT_PATTERN_REFRESH_MS = 60_000;
export const DAY_US = 86_400 * 1_000_000;

export interface PatternRouterDeps {
  policy: PolicyStore;
  readStats: StatsReader;
  clock: Clock;
  log: Logger;
  refreshMs: number;
}

export interface PatternRouter {
  /** What the call runner's route() is given: slot 4 reads the table in force. */
  readonly hooks: SlotHooks;
  table(): PatternTable;
  /** Rebuilds now; a call while a rebuild runs is answered by one more rebuild after it. Never rejects. */
  refresh(): Promise<void>;
  /** The first rebuild, the interval and the rebuild on each policy reload. */
  start(): void;
  /** Stops the interval and any rebuild in progress. */
  stop(): Promise<void>;
}

export function createPatternRouter(deps: PatternRouterDeps): PatternRouter {
  let current = emptyPatternTable(deps.policy.current().pattern.fingerprint);
  const stopping = new AbortController();
  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;

  const rebuild = async () => {
    const cfg = deps.policy.current().pattern;
    if (!cfg.enabled) {
      current = emptyPatternTable(cfg.fingerprint);
      return;
    }
    const started = performance.now();
    const nowUs = deps.clock.nowUs();
    try {
      const rows = await deps.readStats(
        { sinceUs: nowUs - cfg.lookbackDays * DAY_US, version: cfg.fingerprint, minSamples: cfg.minSamples },
        stopping.signal,
      );
      current = buildPatternTable(rows, cfg, nowUs);
      let chosen = 0;
      for (const e of current.entries.values()) if (e.best) chosen++;
      deps.log.info('pattern table rebuilt', {
        fingerprint: cfg.fingerprint,
        keys: current.entries.size,
        keys_with_a_choice: chosen,
        elapsed_ms: Math.round(performance.now() - started),
      });
    } catch (err) {
      if (stopping.signal.aborted) return;
      deps.log.warn('pattern table rebuild failed; the previous table stays in force', {
        error: errorMessage(err),
      });
    }
  };

  const refresh = (): Promise<void> => {
    if (stopping.signal.aborted) return Promise.resolve();
    if (!running) {
      running = rebuild().finally(() => {
        running = null;
      });
      return running;
    }
    queued ??= running.then(() => {
      queued = null;
      return refresh();
    });
    return queued;
  };

  return {
    hooks: {
      pattern(_facts, print) {
        const match = lookupPattern(current, print);
        return match && allowedNow(match, deps.policy.current().pattern) ? match : null;
      },
    },
    table: () => current,
    refresh,
    start() {
      void refresh();
      timer = setInterval(() => void refresh(), deps.refreshMs);
      timer.unref();
      unsubscribe = deps.policy.onReload(() => void refresh());
    },
    async stop() {
      clearInterval(timer);
      unsubscribe?.();
      stopping.abort();
      await running;
    },
  };
}

/**
 * Whether the policy in force still lets slot 4 choose a match of the table in force: after a reload that
 * drops a model from `candidates`, raises a threshold or switches the fingerprint, the table built under the
 * old settings stays until the rebuild ends (seconds on a large store), and must not choose what the new
 * settings forbid meanwhile.
 */
function allowedNow(match: PatternMatch, cfg: PatternConfig): boolean {
  return (
    match.fingerprint_version === cfg.fingerprint &&
    match.samples >= cfg.minSamples &&
    match.success_rate >= cfg.minSuccessRate &&
    (cfg.candidates === null || cfg.candidates.has(match.model))
  );
}

/** SVC_PATTERN_REFRESH_MS, or its default when unset; a value that is not a whole number above 0 refuses the start. */
export function readPatternRefreshMs(env: Pick<SvcEnv, 'patternRefreshMs'>): number {
  return positiveInt(env.patternRefreshMs, 'SVC_PATTERN_REFRESH_MS') ?? DEFAULT_PATTERN_REFRESH_MS;
}

/** A server's slot 4 over its trace store (statistics read by a worker thread), started. */
export function startPatternRouter(opts: {
  store: Store;
  policy: PolicyStore;
  clock: Clock;
  log: Logger;
  /** Read for SVC_PATTERN_REFRESH_MS (the default when unset), parsed here only. */
  env: Pick<SvcEnv, 'patternRefreshMs'>;
}): PatternRouter {
  // before the statistics worker starts: a refused value leaves nothing running
  const refreshMs = readPatternRefreshMs(opts.env);
  const router = createPatternRouter({
    policy: opts.policy,
    readStats:
      opts.store.engine === 'sqlite'
        ? createWorkerStatsReader(opts.store.path, busyTimeoutOf(opts.store))
        : createPostgresStatsReader(opts.store.kysely),
    clock: opts.clock,
    log: opts.log,
    refreshMs,
  });
  router.start();
  return router;
}
