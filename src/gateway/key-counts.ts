/**
 * @module Key counts for the gateway's scrape-time gauges (spec 1 §GET /metrics): active and revoked by
 * effective status at the moment of the scrape, so a lapsed grace period counts as revoked.
 */
import type { Clock } from '../lib/time.ts';
import { type KeyRecord, resolveEffectiveState } from './keystore/keystore.ts';

export interface KeyCounts {
  /** Throws when the keystore cannot be read (the collector then keeps the previous value). */
  active(): number;
  /** Total minus active: explicitly revoked plus grace-expired. */
  revoked(): number;
}

/**
 * Reads the keys at scrape time (`readKeys`: the keystore file, or the replica's copy of the keys
 * table), so an issue or revoke shows without restart. A scrape polls
 * both gauges synchronously in one tick, so one read (dropped at the next microtask) serves both and
 * active + revoked always equals the total.
 */
export function createKeyCounts(readKeys: () => readonly KeyRecord[], clock: Clock): KeyCounts {
  let cached: { active: number; total: number } | undefined;
  const count = () => {
    if (cached) return cached;
    const nowUs = clock.nowUs();
    const keys = readKeys();
    const active = keys.filter((k) => resolveEffectiveState(k, nowUs).status === 'active').length;
    cached = { active, total: keys.length };
    queueMicrotask(() => {
      cached = undefined;
    });
    return cached;
  };
  return {
    active: () => count().active,
    revoked: () => {
      const c = count();
      return c.total - c.active;
    },
  };
}
