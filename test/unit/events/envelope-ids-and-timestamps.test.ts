import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEnvelope } from '#src/events/envelope.ts';
import { createIdFactory, pooledRandom } from '#src/lib/ids.ts';
import { formatUs, parseIsoUs, systemClock } from '#src/lib/time.ts';

const deps = { newId: createIdFactory(), clock: systemClock };

test('an envelope carries every field of spec 2 "Event" plus timestamp_us', () => {
  const e = createEnvelope(
    { type: 'turn.started', payload: { a: 1 }, actor: 'agent', session_id: 'sess_1', turn_id: 't1' },
    deps,
  );
  assert.deepEqual(Object.keys(e).sort(), [
    'actor',
    'id',
    'parent_event_id',
    'payload',
    'sensitivity',
    'session_id',
    'timestamp',
    'timestamp_us',
    'turn_id',
    'type',
  ]);
  assert.equal(e.type, 'turn.started');
  assert.equal(e.actor, 'agent');
  assert.equal(e.session_id, 'sess_1');
  assert.equal(e.parent_event_id, null);
  assert.equal(e.sensitivity, 'pseudonymous'); // the catalog default
  assert.match(e.id, /^[0-9A-HJKMNP-TV-Z]{26}$/); // a ULID
});

test('absent optional fields are null, the actor defaults to system, and sensitivity can be raised', () => {
  const e = createEnvelope(
    { type: 'tool.called', payload: { tool_use_id: 'tu_1', tool_name: 'read_file' } },
    deps,
  );
  assert.equal(e.session_id, null);
  assert.equal(e.turn_id, null);
  assert.equal(e.actor, 'system');
  assert.equal(e.sensitivity, 'private');
  assert.equal(
    createEnvelope({ type: 'turn.started', payload: {}, sensitivity: 'private' }, deps).sensitivity,
    'private',
  );
});

test('ids are strictly increasing even within one millisecond', () => {
  const ids = Array.from(
    { length: 5000 },
    () => createEnvelope({ type: 'turn.started', payload: {} }, deps).id,
  );
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `${ids[i]} <= ${ids[i - 1]}`);
});

test('timestamps are ISO 8601 UTC with microseconds, matching timestamp_us, never going backwards', () => {
  let prev = 0;
  for (let i = 0; i < 2000; i++) {
    const e = createEnvelope({ type: 'turn.started', payload: {} }, deps);
    assert.match(e.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    assert.equal(parseIsoUs(e.timestamp), e.timestamp_us);
    assert.ok(Number.isInteger(e.timestamp_us));
    assert.ok(e.timestamp_us >= prev);
    prev = e.timestamp_us;
  }
  assert.ok(Math.abs(prev / 1000 - Date.now()) < 60_000);
});

test('formatUs keeps all six digits of the microseconds', () => {
  assert.equal(formatUs(1_795_327_262_000_001), '2026-11-22T06:01:02.000001Z');
  assert.equal(formatUs(1_795_327_262_123_456), '2026-11-22T06:01:02.123456Z');
  assert.equal(parseIsoUs('2026-11-22T06:01:02.123456Z'), 1_795_327_262_123_456);
  const pinned = createEnvelope(
    { type: 'turn.started', payload: {} },
    { newId: () => 'X', clock: { nowUs: () => 7 } },
  );
  assert.equal(pinned.timestamp, '1970-01-01T00:00:00.000007Z');
  assert.equal(pinned.id, 'X');
});

test('parseIsoUs refuses impossible dates instead of rolling them over, and honours zone offsets', () => {
  assert.equal(parseIsoUs('2026-02-30T00:00:00Z'), undefined);
  assert.equal(parseIsoUs('2026-04-31T12:00:00Z'), undefined);
  assert.equal(parseIsoUs('2026-11-22T25:00:00Z'), undefined);
  assert.equal(parseIsoUs('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29) * 1000);
  assert.equal(parseIsoUs('2026-11-22T08:01:02+02:00'), parseIsoUs('2026-11-22T06:01:02Z'));
  assert.equal(parseIsoUs('2026-11-22T00:30:00-01:00'), parseIsoUs('2026-11-22T01:30:00Z'));
});

test('pooled randomness is uniform in [0, 1) and ids stay unique and sorted across pool refills', () => {
  const rand = pooledRandom(8);
  const draws = Array.from({ length: 10_000 }, rand);
  assert.ok(draws.every((x) => x >= 0 && x < 1));
  const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
  assert.ok(Math.abs(mean - 0.5) < 0.02, `mean ${mean}`);
  const next = createIdFactory();
  const ids = Array.from({ length: 5000 }, () => next());
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual([...ids].sort(), ids);
});

test('formatUs stays right across second boundaries and at the epoch', () => {
  assert.equal(formatUs(1_795_327_262_999_999), '2026-11-22T06:01:02.999999Z');
  assert.equal(formatUs(1_795_327_263_000_000), '2026-11-22T06:01:03.000000Z');
  assert.equal(formatUs(1_795_327_262_000_000), '2026-11-22T06:01:02.000000Z');
  assert.equal(formatUs(0), '1970-01-01T00:00:00.000000Z');
});
