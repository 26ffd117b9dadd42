/**
 * @module The envelope of every analytics response (spec 3 §Resources): the resolved window, the
 * active price table's version, and the endpoint's data.
 */
import type { WindowBounds } from '../events/catalog.ts';
import { formatWindow, type TimeWindow } from './window.ts';

export interface AnalyticsEnvelope<T> {
  window: WindowBounds;
  current_pricing_version: string;
  data: T;
}

/** `window` null: an endpoint without one (sessions list, turn drill-down) answers `{start: null, end: null}`. */
export function envelope<T>(
  window: TimeWindow | null,
  pricingVersion: string,
  data: T,
): AnalyticsEnvelope<T> {
  return {
    window: window === null ? { start: null, end: null } : formatWindow(window),
    current_pricing_version: pricingVersion,
    data,
  };
}
