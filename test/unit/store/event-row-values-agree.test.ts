/**
 * The SQLite append binds a row's values as arguments (runEventInsert) and the PostgreSQL one builds them
 * as a list (eventValues): two spellings of EVENT_COLUMNS' order, held together here so that a column
 * added to one cannot be missed in the other.
 */
import assert from 'node:assert/strict';
import type { StatementSync } from 'node:sqlite';
import { test } from 'node:test';
import { EVENT_COLUMNS, eventValues, runEventInsert } from '../../../src/store/dialect.ts';
import type { NewEventRow } from '../../../src/store/schema.ts';

function boundBy(row: NewEventRow): unknown[] {
  let bound: unknown[] = [];
  const statement = { run: (...values: unknown[]) => (bound = values) } as unknown as StatementSync;
  runEventInsert(statement, row);
  return bound;
}

test('runEventInsert binds what eventValues lists, in EVENT_COLUMNS order, for full and sparse rows', () => {
  const full: NewEventRow = {
    id: '01JZ0000000000000000000001',
    timestamp: '2026-11-29T21:00:00.000000Z',
    timestamp_us: 1_795_985_600_000_000,
    session_id: 'ses_1',
    turn_id: 'turn_1',
    type: 'llm.call_completed',
    actor: 'gateway',
    payload: '{"cost_usd":"0.01"}',
    parent_event_id: '01JZ0000000000000000000000',
    sensitivity: 'pseudonymous',
  };
  const sparse: NewEventRow = {
    id: '01JZ0000000000000000000002',
    timestamp: '2026-11-29T21:00:00.000001Z',
    timestamp_us: 1_795_985_600_000_001,
    type: 'route.decided',
    actor: 'gateway',
    payload: '{}',
    sensitivity: 'internal',
  };
  for (const row of [full, sparse]) {
    assert.equal(eventValues(row).length, EVENT_COLUMNS.length);
    assert.deepEqual(boundBy(row), eventValues(row));
    assert.deepEqual(
      eventValues(row),
      EVENT_COLUMNS.map((c) => (row as Record<string, unknown>)[c] ?? null),
    );
  }
});
