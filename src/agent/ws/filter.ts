/**
 * @module Subscription filters of the WebSocket stream (spec 2 §WebSocket stream): the two presets, a filter
 * object checked against the union of bus and streaming-only types (`invalid_filter` names the bad string),
 * and the match of one event.
 */
import { EVENT_TYPES, type EventType, isEventType, isPersisted } from '../../events/catalog.ts';
import type { EventEnvelope } from '../../events/envelope.ts';

/**
 * `preset:chat`: token deltas (with the message frame around them), tool events, route.decided, the turn
 * lifecycle, feedback (a failed model call and evaluations) and delegation.
 */
export const CHAT_PRESET_TYPES = [
  'message.start',
  'text.delta',
  'thinking.delta',
  'message.complete',
  'tool.use_start',
  'tool.use_input_delta',
  'tool.use_end',
  'tool.called',
  'tool.completed',
  'tool.failed',
  'tool.confirmation_requested',
  'tool.confirmation_resolved',
  'route.decided',
  'turn.started',
  'turn.completed',
  'turn.cancelled',
  'llm.call_failed',
  'eval.completed',
  'eval.failed',
  'delegate.started',
  'delegate.completed',
  'delegate.failed',
] as const satisfies readonly EventType[];

export const PRESETS = {
  'preset:chat': CHAT_PRESET_TYPES,
  'preset:full': EVENT_TYPES,
} as const satisfies Record<string, readonly EventType[]>;
export type PresetName = keyof typeof PRESETS;

/** A filter as the client sent it (shape already checked by frames.ts). */
export type FilterInput =
  | string
  | {
      event_types?: readonly string[];
      actors?: readonly string[] | null;
      include_worker_sessions?: boolean;
    };

/** The filter a connection applies, as `subscribe_ack.resolved_filter` reports it. */
export interface ResolvedFilter {
  event_types: EventType[];
  /** Envelope `actor` values; null lets every actor through. */
  actors: string[] | null;
  include_worker_sessions: boolean;
}

/**
 * Expands a preset or checks a filter object (a missing `event_types` means every type); a string that is
 * neither a preset nor an event type gives `invalid`, naming it (the `invalid_filter` subscribe_error).
 */
export function resolveFilter(input: FilterInput): { filter: ResolvedFilter } | { invalid: string } {
  if (typeof input === 'string') {
    if (!Object.hasOwn(PRESETS, input))
      return { invalid: `filter "${input}" is not a preset (preset:chat or preset:full)` };
    const types = [...PRESETS[input as PresetName]];
    return { filter: { event_types: types, actors: null, include_worker_sessions: false } };
  }
  const types = input.event_types ?? EVENT_TYPES;
  const bad = types.find((t) => !isEventType(t));
  if (bad !== undefined) return { invalid: `event_types: "${bad}" is not an event type` };
  return {
    filter: {
      event_types: [...new Set(types as readonly EventType[])],
      actors: input.actors ? [...new Set(input.actors)] : null,
      include_worker_sessions: input.include_worker_sessions ?? false,
    },
  };
}

/** A resolved filter compiled for the per-event check. */
export interface CompiledFilter {
  readonly resolved: ResolvedFilter;
  /** Persisted types only: what a replay from the trace store may return. */
  readonly persistedTypes: EventType[];
  matches(event: EventEnvelope, fromWorker: boolean): boolean;
}

export function compileFilter(resolved: ResolvedFilter): CompiledFilter {
  const types = new Set<string>(resolved.event_types);
  const actors = resolved.actors ? new Set(resolved.actors) : null;
  return {
    resolved,
    persistedTypes: resolved.event_types.filter(isPersisted),
    matches(event, fromWorker) {
      if (fromWorker && !resolved.include_worker_sessions) return false;
      if (!types.has(event.type)) return false;
      return actors === null || actors.has(event.actor);
    },
  };
}
