/**
 * Seeds the trace store directly, bypassing the bus: a migrated store (the real openStore) and rows
 * inserted with one prepared statement in one transaction, fast enough for hundreds of thousands.
 */
import type { DatabaseSync } from 'node:sqlite';
import { formatUs } from '#src/lib/time.ts';
import { openStore } from '#src/store/open.ts';
import type { NewEventRow } from '#src/store/schema.ts';

export interface SeedEvent {
  id: string;
  timestamp_us: number;
  type?: string;
  actor?: string;
  session_id?: string | null;
  turn_id?: string | null;
  parent_event_id?: string | null;
  sensitivity?: string;
  /** Object (stringified) or exact JSON text. */
  payload: Record<string, unknown> | string;
}

/** A seeded event as the store's appendEvents takes it (either engine), defaults filled in. */
export function eventRowOf(e: SeedEvent): NewEventRow {
  return {
    id: e.id,
    timestamp: formatUs(e.timestamp_us),
    timestamp_us: e.timestamp_us,
    session_id: e.session_id ?? null,
    turn_id: e.turn_id ?? null,
    type: e.type ?? 'llm.call_completed',
    actor: e.actor ?? 'gateway',
    payload: typeof e.payload === 'string' ? e.payload : JSON.stringify(e.payload),
    parent_event_id: e.parent_event_id ?? null,
    sensitivity: e.sensitivity ?? 'pseudonymous',
  };
}

/** 2026-01-01T00:00:00Z in epoch microseconds. */
export const BASE_US = 1_767_225_600_000_000;

/** A sortable event id for position `i` (26 characters, like a ULID). */
export function seqId(i: number, prefix = '01TEST'): string {
  return `${prefix}${String(i).padStart(26 - prefix.length, '0')}`;
}

/** Inserts `count` events produced by `make(i)` in one transaction. */
export function insertEvents(db: DatabaseSync, count: number, make: (i: number) => SeedEvent): void {
  const stmt = db.prepare(
    `INSERT INTO events (id, timestamp, timestamp_us, session_id, turn_id, type, actor, payload, parent_event_id, sensitivity)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  db.exec('BEGIN IMMEDIATE');
  try {
    for (let i = 0; i < count; i++) {
      const e = make(i);
      stmt.run(
        e.id,
        isoUs(e.timestamp_us),
        e.timestamp_us,
        e.session_id ?? null,
        e.turn_id ?? null,
        e.type ?? 'llm.call_completed',
        e.actor ?? 'gateway',
        typeof e.payload === 'string' ? e.payload : JSON.stringify(e.payload),
        e.parent_event_id ?? null,
        e.sensitivity ?? 'pseudonymous',
      );
    }
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}

/** Creates (migrates) a store at `path`, seeds it and closes it. */
export async function seedStore(path: string, count: number, make: (i: number) => SeedEvent): Promise<void> {
  const store = await openStore(path);
  try {
    insertEvents(store.db, count, make);
  } finally {
    await store.close();
  }
}

/** An llm.call_completed payload attributed to `userId`. */
export function callPayload(
  userId: string | null,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    requested_model: null,
    model: 'anthropic:claude-sonnet-4-5',
    provider: 'anthropic',
    gateway_key_id: 'gk_01TESTKEY',
    inbound_shape: 'anthropic',
    user_id: userId,
    team_id: 'team_core',
    parent_session_id: null,
    cost_usd: '0.000120',
    pricing_version: 'test-2026-01',
    input_tokens: 12,
    output_tokens: 34,
    cached_input_tokens: 0,
    cache_creation_input_tokens: 0,
    latency_ms: 321,
    ttft_ms: 45,
    stop_reason: 'end_turn',
    error_class: null,
    attempts: 1,
    ...extra,
  };
}

// --- internal ---

function isoUs(us: number): string {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}
