/**
 * @module Startup gap detection (spec 2 §Startup 5, for the gateway's own turns): a gateway turn whose
 * process ended before it closed (kill -9, crash) has no turn.completed, and its llm.call_started no
 * llm.call_completed / llm.call_failed. Each such turn is named once in a `bus.gap_detected`, committed
 * before the gateway listens, so no reader takes it for in flight. Only turns begun since the previous
 * gateway start (store_meta watermark, minus a clock margin) are scanned, so a start stays cheap.
 * On PostgreSQL other replicas may be serving: a turn whose rows came from a live replica (events.origin
 * holding its presence lock) is in flight, not a gap, and the watermark stops before the oldest such turn
 * so that a later start looks at it again.
 */
import { sql } from 'kysely';
import type { Bus } from '../events/bus.ts';
import { LLM_CALL_TERMINATORS, TURN_TERMINATORS } from '../events/catalog.ts';
import type { Logger } from '../lib/log.ts';
import type { Clock } from '../lib/time.ts';
import { ADVISORY_LOCKS, eventOrigin } from '../store/dialect.ts';
import type { Store } from '../store/open.ts';

export interface GapDetectionDeps {
  store: Store;
  bus: Bus;
  clock: Clock;
  log: Logger;
}

/** store_meta key: where the next start's scan begins (this start's time, in µs). */
export const GAP_SCAN_KEY = 'gateway_gap_scan_from_us';
/** Rescanned before the watermark, for clock steps; turns already named are skipped anyway. */
const CLOCK_MARGIN_US = 10 * 60 * 1_000_000;

/**
 * Publishes one bus.gap_detected per gateway turn left open; resolves with their count once committed.
 * On PostgreSQL one replica scans at a time: replicas starting together would each name the same dead
 * turns, so one that finds another scanning leaves the naming to it (and names nothing).
 */
export async function runGapDetection(deps: GapDetectionDeps): Promise<number> {
  if (deps.store.engine !== 'postgres') return detectGaps(deps);
  const [a, b] = ADVISORY_LOCKS.gaps;
  return deps.store.kysely.connection().execute(async (conn) => {
    const { rows } = await sql<{ taken: boolean }>`
      SELECT pg_try_advisory_lock(${sql.lit(a)}, ${sql.lit(b)}) AS taken`.execute(conn);
    if (!rows[0]?.taken) return 0;
    try {
      return await detectGaps(deps);
    } finally {
      await sql`SELECT pg_advisory_unlock(${sql.lit(a)}, ${sql.lit(b)})`.execute(conn).catch(() => undefined);
    }
  });
}

// --- internal ---

async function detectGaps(deps: GapDetectionDeps): Promise<number> {
  const startedUs = deps.clock.nowUs();
  const fromUs = Math.max(0, (await readWatermark(deps.store)) - CLOCK_MARGIN_US);
  const found = await findOpenTurns(deps.store, fromUs);
  const live = await liveTurns(deps.store, found);
  const turns = new Map([...found].filter(([id]) => !live.has(id)));
  const watermarkUs = Math.min(startedUs, ...[...live.values()].map((t) => t.firstEventUs));
  const published = [...turns.values()].map((turn) =>
    deps.bus.publish({
      type: 'bus.gap_detected',
      actor: 'gateway',
      turn_id: turn.turnId,
      parent_event_id: turn.openCalls[0] ?? null,
      payload: {
        reason: 'process_ended',
        turn_id: turn.turnId,
        llm_call_started_ids: turn.openCalls,
        first_event_at: turn.firstEventAt,
      },
    }),
  );
  await Promise.all(published.map((p) => p.committed));
  // committed settles for an event the store refused too (dropped and logged): the watermark moves past these
  // turns only once every gap event naming one is stored, or a refused one would never be named again
  if (
    await allStored(
      deps.store,
      published.map((p) => p.event.id),
    )
  )
    await writeWatermark(deps.store, watermarkUs);
  if (turns.size > 0) {
    deps.log.warn('turns left open by a gateway process that ended without closing them', {
      turns: turns.size,
      llm_calls: [...turns.values()].reduce((n, t) => n + t.openCalls.length, 0),
      event: 'bus.gap_detected',
    });
  }
  return turns.size;
}

interface OpenTurn {
  turnId: string;
  firstEventAt: string;
  firstEventUs: number;
  openCalls: string[];
  /** The processes that wrote its rows (PostgreSQL; none on SQLite). */
  origins: Set<string>;
}

/** Open turns written by a replica that is still alive: in flight elsewhere, not gaps. */
async function liveTurns(store: Store, turns: Map<string, OpenTurn>): Promise<Map<string, OpenTurn>> {
  if (store.engine !== 'postgres' || turns.size === 0) return new Map();
  const origins = new Set([...turns.values()].flatMap((t) => [...t.origins]));
  const alive = await store.liveOrigins(origins);
  return new Map([...turns].filter(([, t]) => [...t.origins].some((o) => alive.has(o))));
}

/** Gateway turns (opening events carry a gateway key) with no terminator, and their unclosed calls. */
async function findOpenTurns(store: Store, fromUs: number): Promise<Map<string, OpenTurn>> {
  const { rows } = await sql<{
    id: string;
    turn_id: string;
    type: string;
    timestamp: string;
    timestamp_us: number;
    origin: string | null;
    closed: number;
  }>`
    SELECT s.id, s.turn_id, s.type, s.timestamp, s.timestamp_us, ${eventOrigin(store.dialect, 's')} AS origin,
      EXISTS (SELECT 1 FROM events c WHERE c.turn_id = s.turn_id AND c.parent_event_id = s.id
              AND c.type IN (${sql.join(LLM_CALL_TERMINATORS)})) AS closed
    FROM ${scanFrom(store)}
    WHERE s.type IN ('route.decided', 'llm.call_started') AND s.timestamp_us >= ${fromUs}
      AND s.turn_id IS NOT NULL AND s.gateway_key_id IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM events t WHERE t.turn_id = s.turn_id
                      AND t.type IN (${sql.join(TURN_TERMINATORS)}))
    ORDER BY s.id`.execute(store.kysely);
  const turns = new Map<string, OpenTurn>();
  for (const r of rows) {
    let turn = turns.get(r.turn_id);
    if (!turn) {
      turn = {
        turnId: r.turn_id,
        firstEventAt: r.timestamp,
        firstEventUs: Number(r.timestamp_us),
        openCalls: [],
        origins: new Set(),
      };
      turns.set(r.turn_id, turn);
    }
    if (r.origin) turn.origins.add(r.origin);
    if (r.type === 'llm.call_started' && !r.closed) turn.openCalls.push(r.id);
  }
  return turns;
}

async function readWatermark(store: Store): Promise<number> {
  const row = await store.kysely
    .selectFrom('store_meta')
    .select('value')
    .where('key', '=', GAP_SCAN_KEY)
    .executeTakeFirst();
  const us = Number(row?.value);
  return Number.isSafeInteger(us) && us > 0 ? us : 0;
}

/** Whether every event of `ids` is in the store (read in chunks well under either engine's bound on parameters). */
async function allStored(store: Store, ids: string[]): Promise<boolean> {
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const row = await store.kysely
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('id', 'in', chunk)
      .executeTakeFirstOrThrow();
    if (Number(row.n) !== chunk.length) return false;
  }
  return true;
}

async function writeWatermark(store: Store, us: number): Promise<void> {
  await store.kysely
    .insertInto('store_meta')
    .values({ key: GAP_SCAN_KEY, value: String(us) })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: String(us) }))
    .execute();
}

/**
 * The opening events since the watermark, read as one range of the time-leading index (SQLite without
 * table statistics would rather walk the whole table in id order to spare the ORDER BY's sort).
 */
function scanFrom(store: Store) {
  return store.engine === 'sqlite' ? sql`events AS s INDEXED BY events_time_type` : sql`events s`;
}
