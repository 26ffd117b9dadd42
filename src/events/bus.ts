/**
 * @module The in-process event bus. Publishing never throws: a failing subscriber is logged, answered
 * with `bus.handler_warning`, and skipped. Durable subscribers (the trace writer) return a promise that
 * the publisher can await through `committed` before it sends its final byte.
 */
import type { NewId } from '../lib/ids.ts';
import type { Logger } from '../lib/log.ts';
import type { Clock } from '../lib/time.ts';
import type { EventType } from './catalog.ts';
import { createEnvelope, type EventEnvelope, type EventInput } from './envelope.ts';

export interface Subscriber {
  readonly name: string;
  /** Only these types reach the handler; all types when absent. */
  readonly types?: readonly EventType[];
  /**
   * When true, the handler stores the event and its promise is part of `committed` (durability, not just
   * delivery); deliverStored skips it.
   */
  readonly durable?: boolean;
  /**
   * With `durable`: the handler's promise never rejects and may be one shared by many events (the trace
   * writer's per transaction), so it is the event's `committed` as it is, with no guard made per event.
   */
  readonly neverRejects?: boolean;
  handle(event: EventEnvelope): unknown;
}

export interface Published<T extends EventType = EventType> {
  readonly event: EventEnvelope<T>;
  /** Settles when every durable subscriber has finished with the event; never rejects. */
  readonly committed: Promise<void>;
}

export interface Bus {
  publish<T extends EventType>(input: EventInput<T>): Published<T>;
  /**
   * Stamps an envelope (id, timestamps, sensitivity) as publish does, without delivering it: for an event
   * its publisher stores in its own transaction (an audit row that must commit with the change it records,
   * or not at all), then hands to deliverStored once that transaction committed.
   */
  stamp<T extends EventType>(input: EventInput<T>): EventEnvelope<T>;
  /**
   * Delivers a stamped event that is already stored to every subscriber except the durable ones (they
   * store events: the trace writer would write it a second time).
   */
  deliverStored(event: EventEnvelope): void;
  /**
   * Registers a subscriber and emits `bus.subscriber_registered` (which the subscriber itself receives);
   * returns a function that unregisters it and emits `bus.subscriber_unregistered`.
   */
  subscribe(subscriber: Subscriber): () => void;
  /**
   * With `holdAnnouncements`: publishes the `bus.subscriber_registered` events of the subscriptions made so
   * far (stamped now, so ids keep the order of the rows) and announces later ones at once. A server calls it once its start
   * succeeded, so a refused start leaves no bookkeeping events in the trace. A no-op otherwise.
   */
  announceSubscribers(): void;
  readonly subscriberNames: readonly string[];
}

export interface BusDeps {
  newId: NewId;
  clock: Clock;
  log: Logger;
  /** Keep `bus.subscriber_registered` events until announceSubscribers() (a server's start). */
  holdAnnouncements?: boolean;
}

const SETTLED: Promise<void> = Promise.resolve();
const toVoid = (): void => undefined;

export function createBus(deps: BusDeps): Bus {
  // Copy-on-write: a handler that (un)subscribes during delivery does not disturb the loop in progress.
  let subscribers: readonly Subscriber[] = [];
  /** Registrations not announced yet (holdAnnouncements), in order. */
  let held:
    | Array<{ subscriber: Subscriber; registered: EventInput<'bus.subscriber_registered'> }>
    | undefined = deps.holdAnnouncements ? [] : undefined;

  const warn = (sub: Subscriber, event: EventEnvelope, err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    deps.log.warn('bus subscriber failed', {
      subscriber: sub.name,
      event_type: event.type,
      event_id: event.id,
      message,
    });
    if (event.type === 'bus.handler_warning') return; // never recurse
    publish({
      type: 'bus.handler_warning',
      actor: 'bus',
      payload: { subscriber: sub.name, event_id: event.id, event_type: event.type, message },
      session_id: event.session_id,
      turn_id: event.turn_id,
      parent_event_id: event.id,
    });
  };

  function publish<T extends EventType>(input: EventInput<T>): Published<T> {
    const event = createEnvelope(input, deps);
    return { event, committed: deliver(event, false) };
  }

  /** Hands `event` to every subscriber (but the durable ones when it is already stored). */
  function deliver(event: EventEnvelope, stored: boolean): Promise<void> {
    // one durable subscriber (the trace writer) is the rule: its promise alone, without Promise.all
    let durable: Promise<void> | undefined;
    let more: Promise<void>[] | undefined;
    for (const sub of subscribers) {
      if (sub.types && !sub.types.includes(event.type)) continue;
      if (stored && sub.durable) continue;
      try {
        const result = sub.handle(event);
        if (result && typeof (result as Promise<unknown>).then === 'function') {
          const guarded =
            sub.durable && sub.neverRejects
              ? (result as Promise<void>)
              : (result as Promise<unknown>).then(toVoid, (err) => warn(sub, event, err));
          if (!sub.durable) continue;
          if (durable === undefined) durable = guarded;
          else {
            more ??= [];
            more.push(guarded);
          }
        }
      } catch (err) {
        warn(sub, event, err);
      }
    }
    if (durable === undefined) return SETTLED;
    return more === undefined ? durable : Promise.all([durable, ...more]).then(toVoid);
  }

  return {
    publish,
    stamp: (input) => createEnvelope(input, deps),
    deliverStored(event) {
      void deliver(event, true);
    },
    subscribe(subscriber) {
      subscribers = [...subscribers, subscriber];
      const registered: EventInput<'bus.subscriber_registered'> = {
        type: 'bus.subscriber_registered',
        actor: 'bus',
        payload: { subscriber: subscriber.name },
      };
      if (held) held.push({ subscriber, registered });
      else publish(registered);
      return () => {
        if (!subscribers.includes(subscriber)) return;
        subscribers = subscribers.filter((s) => s !== subscriber);
        // unsubscribed before it was announced: neither event is told
        if (held?.some((h) => h.subscriber === subscriber)) {
          held = held.filter((h) => h.subscriber !== subscriber);
          return;
        }
        publish({
          type: 'bus.subscriber_unregistered',
          actor: 'bus',
          payload: { subscriber: subscriber.name },
        });
      };
    },
    announceSubscribers() {
      const announced = held ?? [];
      held = undefined;
      for (const h of announced) publish(h.registered);
    },
    get subscriberNames() {
      return subscribers.map((s) => s.name);
    },
  };
}
