/**
 * A server's bus (holdAnnouncements) keeps the bus.subscriber_registered events of its start until
 * announceSubscribers(): a refused start never calls it, so nothing about it reaches the trace writer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBus } from '#src/events/bus.ts';
import type { EventEnvelope } from '#src/events/envelope.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';

function recorder(name: string) {
  const seen: EventEnvelope[] = [];
  return { seen, sub: { name, handle: (e: EventEnvelope) => void seen.push(e) } };
}

const registered = (seen: EventEnvelope[]) =>
  seen.filter((e) => e.type === 'bus.subscriber_registered').map((e) => e.payload);

test('registrations are told only once announced, in order, and later ones at once', () => {
  const bus = createBus({
    newId: createIdFactory(),
    clock: systemClock,
    log: silentLogger,
    holdAnnouncements: true,
  });
  const writer = recorder('trace_writer');
  const gone = recorder('gone');
  bus.subscribe(writer.sub);
  const unsubscribe = bus.subscribe(gone.sub);
  bus.subscribe(recorder('metrics').sub);
  unsubscribe(); // before the announcement: neither its registration nor its leaving is told
  assert.equal(writer.seen.length, 0, 'nothing is published before the start succeeded');
  bus.announceSubscribers();
  bus.subscribe(recorder('late').sub);
  assert.deepEqual(registered(writer.seen), [
    { subscriber: 'trace_writer' },
    { subscriber: 'metrics' },
    { subscriber: 'late' },
  ]);
  assert.equal(
    writer.seen.some((e) => e.type === 'bus.subscriber_unregistered'),
    false,
  );
});

test('without holdAnnouncements, a registration is told at once', () => {
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
  const a = recorder('a');
  bus.subscribe(a.sub);
  assert.deepEqual(registered(a.seen), [{ subscriber: 'a' }]);
  bus.announceSubscribers();
  assert.equal(a.seen.length, 1, 'announceSubscribers is a no-op');
});
