/**
 * What the trace store says after a fault, read with plain SQL (node:sqlite), the way an operator would:
 * integrity, which turns have their closing event, calls left open, gap reports, spend per key, file modes.
 */
import { existsSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';

/** Opens the store read-write (so a WAL left by a crash is recovered) for `fn`, then closes it. */
export function withStore<T>(path: string, fn: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(path);
  try {
    db.exec('PRAGMA busy_timeout = 10000');
    return fn(db);
  } finally {
    db.close();
  }
}

/** `PRAGMA integrity_check`: `ok`, or the first problems it lists. */
export function integrity(db: DatabaseSync): string {
  const rows = db.prepare('PRAGMA integrity_check').all() as Array<Record<string, string>>;
  return rows.map((r) => Object.values(r)[0]).join('; ');
}

/** Turn ids that have an `llm.call_completed`. */
export function completedTurns(db: DatabaseSync): Set<string> {
  const rows = db
    .prepare("SELECT DISTINCT turn_id FROM events WHERE type = 'llm.call_completed'")
    .all() as Array<{ turn_id: string }>;
  return new Set(rows.map((r) => r.turn_id));
}

export interface OpenCall {
  /** Event id of the `llm.call_started`. */
  id: string;
  turnId: string | null;
}

/** `llm.call_started` events with no closing `llm.call_completed` / `llm.call_failed` pointing at them. */
export function openCalls(db: DatabaseSync): OpenCall[] {
  const rows = db
    .prepare(
      `SELECT s.id, s.turn_id FROM events s WHERE s.type = 'llm.call_started' AND NOT EXISTS (
         SELECT 1 FROM events e WHERE e.parent_event_id = s.id
           AND e.type IN ('llm.call_completed', 'llm.call_failed'))`,
    )
    .all() as Array<{ id: string; turn_id: string | null }>;
  return rows.map((r) => ({ id: r.id, turnId: r.turn_id }));
}

/** The newest event id (ids are ULIDs: later events sort after it). */
export function lastEventId(db: DatabaseSync): string {
  const row = db.prepare('SELECT max(id) AS id FROM events').get() as { id: string | null };
  return row.id ?? '';
}

/** Payload texts of the `bus.gap_detected` events written after event `afterId`. */
export function gapReports(db: DatabaseSync, afterId: string): string[] {
  const rows = db
    .prepare("SELECT payload FROM events WHERE type = 'bus.gap_detected' AND id > ? ORDER BY id")
    .all(afterId) as Array<{ payload: string }>;
  return rows.map((r) => r.payload);
}

/** How many of `calls` a gap report names, by their event id or their turn id. */
export function namedByGaps(calls: OpenCall[], reports: string[]): number {
  const text = reports.join('\n');
  return calls.filter((c) => text.includes(c.id) || (c.turnId !== null && text.includes(c.turnId))).length;
}

export interface KeySpend {
  completed: number;
  failed: number;
  /** Sum of `cost_usd` of the key's `llm.call_completed` events. */
  spendUsd: number;
}

/** Calls and spend of one gateway key. */
export function spendOf(db: DatabaseSync, keyId: string): KeySpend {
  const row = db
    .prepare(
      `SELECT
         sum(type = 'llm.call_completed') AS completed,
         sum(type = 'llm.call_failed') AS failed,
         total(CASE WHEN type = 'llm.call_completed' THEN CAST(json_extract(payload, '$.cost_usd') AS REAL) END) AS spend
       FROM events WHERE json_extract(payload, '$.gateway_key_id') = ?`,
    )
    .get(keyId) as { completed: number | null; failed: number | null; spend: number };
  return { completed: row.completed ?? 0, failed: row.failed ?? 0, spendUsd: row.spend };
}

/** The cost of the call of one turn, or undefined when it has no `llm.call_completed`. */
export function costOfTurn(db: DatabaseSync, turnId: string): number | undefined {
  const row = db
    .prepare(
      "SELECT json_extract(payload, '$.cost_usd') AS cost FROM events WHERE type = 'llm.call_completed' AND turn_id = ?",
    )
    .get(turnId) as { cost: string } | undefined;
  return row ? Number(row.cost) : undefined;
}

/** Octal permission bits of the store, its WAL and SHM (`absent` when a file does not exist). */
export function storeModes(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const suffix of ['', '-wal', '-shm']) {
    const file = `${path}${suffix}`;
    out[`svc.db${suffix}`] = existsSync(file)
      ? (statSync(file).mode & 0o777).toString(8).padStart(4, '0')
      : 'absent';
  }
  return out;
}

/** Size of the store's WAL file in MiB (0 when absent). */
export function walMiB(path: string): number {
  const file = `${path}-wal`;
  return existsSync(file) ? statSync(file).size / 1048576 : 0;
}

export interface Closing {
  /** `llm.call_completed`, `llm.call_failed`, or `none`. */
  type: string;
  errorClass: string | null;
  costUsd: string | null;
}

/** How the call of one turn was closed in the store. */
export function closingOf(db: DatabaseSync, turnId: string): Closing {
  const row = db
    .prepare(
      `SELECT type, json_extract(payload, '$.error_class') AS error_class, json_extract(payload, '$.cost_usd') AS cost
       FROM events WHERE turn_id = ? AND type IN ('llm.call_completed', 'llm.call_failed') ORDER BY id DESC LIMIT 1`,
    )
    .get(turnId) as { type: string; error_class: string | null; cost: string | null } | undefined;
  return row
    ? { type: row.type, errorClass: row.error_class, costUsd: row.cost === null ? null : String(row.cost) }
    : { type: 'none', errorClass: null, costUsd: null };
}
