import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createBus } from '#src/events/bus.ts';
import type { EventEnvelope } from '#src/events/envelope.ts';
import { createTraceWriter } from '#src/events/trace-writer.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { createLogger, silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import { openStore } from '#src/store/open.ts';

const newBus = (log = silentLogger) => createBus({ newId: createIdFactory(), clock: systemClock, log });

function recorder(name: string) {
  const seen: EventEnvelope[] = [];
  return { seen, sub: { name, handle: (e: EventEnvelope) => void seen.push(e) } };
}

test('subscribing emits bus.subscriber_registered, which the new subscriber receives', () => {
  const bus = newBus();
  const a = recorder('a');
  bus.subscribe(a.sub);
  assert.deepEqual(
    a.seen.map((e) => [e.type, e.payload]),
    [['bus.subscriber_registered', { subscriber: 'a' }]],
  );
  assert.deepEqual(bus.subscriberNames, ['a']);
});

test('a throwing subscriber is logged and answered with bus.handler_warning; the publisher and others are unaffected', () => {
  const lines: string[] = [];
  const bus = newBus(createLogger({ write: (l) => void lines.push(l) }));
  const before = recorder('before');
  const after = recorder('after');
  bus.subscribe(before.sub);
  bus.subscribe({
    name: 'thrower',
    types: ['turn.started'],
    handle() {
      throw new Error('kaput');
    },
  });
  bus.subscribe(after.sub);
  const published = bus.publish({ type: 'turn.started', payload: {}, turn_id: 't1' });
  assert.equal(published.event.type, 'turn.started');
  for (const r of [before, after]) {
    const types = r.seen.map((e) => e.type).filter((t) => t !== 'bus.subscriber_registered');
    assert.deepEqual(types.sort(), ['bus.handler_warning', 'turn.started']);
  }
  const warning = after.seen.find((e) => e.type === 'bus.handler_warning');
  assert.ok(warning);
  assert.deepEqual(warning.payload, {
    subscriber: 'thrower',
    event_id: published.event.id,
    event_type: 'turn.started',
    message: 'kaput',
  });
  assert.equal(warning.parent_event_id, published.event.id);
  assert.equal(warning.turn_id, 't1');
  const logged = lines.map((l) => JSON.parse(l));
  assert.equal(logged.length, 1);
  assert.equal(logged[0].level, 'warn');
  assert.equal(logged[0].subscriber, 'thrower');
});

test('an async rejection is reported too, and committed still resolves', async () => {
  const bus = newBus();
  const r = recorder('r');
  bus.subscribe(r.sub);
  bus.subscribe({
    name: 'async',
    durable: true,
    types: ['turn.completed'],
    handle: async () => Promise.reject(new Error('later')),
  });
  const p = bus.publish({ type: 'turn.completed', payload: {} });
  await p.committed; // never rejects
  const warning = r.seen.find((e) => e.type === 'bus.handler_warning');
  assert.ok(warning);
  assert.equal((warning.payload as { message: string }).message, 'later');
});

test('a subscriber that also throws on the warning does not recurse', () => {
  const bus = newBus();
  let calls = 0;
  bus.subscribe({
    name: 'always',
    handle() {
      calls++;
      throw new Error('no');
    },
  });
  calls = 0;
  bus.publish({ type: 'turn.started', payload: {} });
  assert.equal(calls, 2); // the event and its one warning
});

test('unsubscribing stops delivery, emits bus.subscriber_unregistered and is safe during delivery', () => {
  const bus = newBus();
  const watcher = recorder('watcher');
  bus.subscribe(watcher.sub);
  let off: () => void = () => {};
  let got = 0;
  off = bus.subscribe({
    name: 'once',
    types: ['turn.started'],
    handle() {
      got++;
      off();
    },
  });
  bus.publish({ type: 'turn.started', payload: {} });
  bus.publish({ type: 'turn.started', payload: {} });
  assert.equal(got, 1);
  assert.equal(watcher.seen.filter((e) => e.type === 'turn.started').length, 2);
  assert.ok(watcher.seen.some((e) => e.type === 'bus.subscriber_unregistered'));
  assert.deepEqual(bus.subscriberNames, ['watcher']);
  off(); // twice is harmless
});

test('bus.handler_warning for a throwing subscriber is persisted by the trace writer', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bus-'));
  const store = await openStore(join(dir, 'svc.db'));
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const bus = newBus();
  const writer = createTraceWriter({ store, log: silentLogger });
  bus.subscribe(writer.subscriber);
  bus.subscribe({
    name: 'broken_metrics',
    handle(e) {
      if (e.type === 'llm.call_started') throw new Error('bad label');
    },
  });
  const p = bus.publish({ type: 'llm.call_started', payload: {} });
  await p.committed;
  await writer.stop();
  const rows = await store.kysely
    .selectFrom('events')
    .select(['type', 'payload', 'parent_event_id'])
    .orderBy('id')
    .execute();
  assert.deepEqual(
    rows.map((r) => r.type),
    ['bus.subscriber_registered', 'bus.subscriber_registered', 'llm.call_started', 'bus.handler_warning'],
  );
  const warning = rows[3];
  assert.equal(JSON.parse(warning.payload).subscriber, 'broken_metrics');
  assert.equal(warning.parent_event_id, p.event.id);
});
