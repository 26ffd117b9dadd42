/**
 * Bus envelopes built by hand, for tests that feed the trace writer (or anything taking EventEnvelope)
 * without a bus: fresh ULIDs, the system clock, a gateway `turn.completed` carrying `{ n }`.
 */
import type { EventEnvelope } from '#src/events/envelope.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { systemClock } from '#src/lib/time.ts';

const newId = createIdFactory();

/** The `n`th numbered envelope: a gateway turn.completed now, payload `{ n }`. */
export function numberedEvent(n: number): EventEnvelope {
  const us = systemClock.nowUs();
  return {
    id: newId(),
    timestamp: new Date(us / 1000).toISOString(),
    timestamp_us: us,
    session_id: null,
    turn_id: null,
    type: 'turn.completed',
    actor: 'gateway',
    payload: { n } as never,
    parent_event_id: null,
    sensitivity: 'pseudonymous',
  };
}
