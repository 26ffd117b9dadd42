/**
 * @module The event envelope of spec 2 "Event": one shape on the bus, in the store and on the wire.
 */
import type { NewId } from '../lib/ids.ts';
import { type Clock, formatUs } from '../lib/time.ts';
import { type Actor, EVENT_CATALOG, type EventType, type PayloadOf, type Sensitivity } from './catalog.ts';

export interface EventEnvelope<T extends EventType = EventType> {
  id: string;
  timestamp: string;
  timestamp_us: number;
  session_id: string | null;
  turn_id: string | null;
  type: T;
  actor: Actor | string;
  payload: PayloadOf<T>;
  parent_event_id: string | null;
  sensitivity: Sensitivity;
}

export interface EventInput<T extends EventType = EventType> {
  type: T;
  payload: PayloadOf<T>;
  actor?: Actor | string;
  session_id?: string | null;
  turn_id?: string | null;
  parent_event_id?: string | null;
  sensitivity?: Sensitivity;
}

/** Stamps id (monotonic ULID), both timestamps and the catalog's default sensitivity. */
export function createEnvelope<T extends EventType>(
  input: EventInput<T>,
  deps: { newId: NewId; clock: Clock },
): EventEnvelope<T> {
  const us = deps.clock.nowUs();
  return {
    id: deps.newId(),
    timestamp: formatUs(us),
    timestamp_us: us,
    session_id: input.session_id ?? null,
    turn_id: input.turn_id ?? null,
    type: input.type,
    actor: input.actor ?? 'system',
    payload: input.payload,
    parent_event_id: input.parent_event_id ?? null,
    sensitivity: input.sensitivity ?? EVENT_CATALOG[input.type].sensitivity,
  };
}
