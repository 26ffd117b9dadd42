/**
 * @module Waits for a turn's end on the bus (turn.completed or turn.cancelled): DELETE ?purge=true lets a
 * cancelled turn publish its last events before the session's rows go, so none outlive the purge.
 * One subscriber for the process, registered at startup.
 */
import type { Bus } from '../../events/bus.ts';

export interface TurnEndWatch {
  /** Resolves true when the turn ends, false after `timeoutMs` without its end. */
  wait(turnId: string, timeoutMs: number): Promise<boolean>;
}

export function createTurnEndWatch(bus: Pick<Bus, 'subscribe'>): TurnEndWatch {
  const waiters = new Map<string, Set<(ended: boolean) => void>>();
  bus.subscribe({
    name: 'agent-turn-ends',
    types: ['turn.completed', 'turn.cancelled'],
    handle(event) {
      const set = event.turn_id ? waiters.get(event.turn_id) : undefined;
      if (!set) return;
      waiters.delete(event.turn_id as string);
      for (const resolve of set) resolve(true);
    },
  });
  return {
    wait(turnId, timeoutMs) {
      return new Promise<boolean>((resolve) => {
        let set = waiters.get(turnId);
        if (!set) {
          set = new Set();
          waiters.set(turnId, set);
        }
        const done = (ended: boolean) => {
          clearTimeout(timer);
          resolve(ended);
        };
        const timer = setTimeout(() => {
          set.delete(done);
          if (set.size === 0) waiters.delete(turnId);
          resolve(false);
        }, timeoutMs);
        set.add(done);
      });
    },
  };
}
