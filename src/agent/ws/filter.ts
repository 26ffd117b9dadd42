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

/** The filter a connection applies, as `subscribe_ack.resolved_filter` reports it. */
export interface ResolvedFilter {
  event_types: EventType[];
  /** Envelope `actor` values; null lets every actor through. */
  actors: string[] | null;
  include_worker_sessions: boolean;
}

/**
 * Expands a preset or checks a filter object (`event_types` or `actors` missing or null: every one); anything
 * else gives `invalid` naming the string or the field (the `invalid_filter` subscribe_error).
 */
export function resolveFilter(input: unknown): { filter: ResolvedFilter } | { invalid: string } {
  if (typeof input === 'string') {
    if (!Object.hasOwn(PRESETS, input))
      return { invalid: `filter "${input.slice(0, 100)}" is not a preset (preset:chat or preset:full)` };
    const types = [...PRESETS[input as PresetName]];
    return { filter: { event_types: types, actors: null, include_worker_sessions: false } };
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return {
      invalid: `filter: must be "preset:chat", "preset:full" or an object {${FILTER_FIELDS.join(', ')}}`,
    };
  const fields = input as Record<string, unknown>;
  const unknown = Object.keys(fields).find((k) => !(FILTER_FIELDS as readonly string[]).includes(k));
  if (unknown !== undefined)
    return { invalid: `filter.${unknown.slice(0, 100)} is not a filter field (${FILTER_FIELDS.join(', ')})` };
  const { event_types: types = null, actors = null, include_worker_sessions: workers = null } = fields;
  if (types !== null && !isStringList(types))
    return { invalid: 'event_types: must be a list of event types (or null for every type)' };
  const bad = types?.find((t) => !isEventType(t));
  if (bad !== undefined) return { invalid: `event_types: "${bad.slice(0, 100)}" is not an event type` };
  if (actors !== null && !isStringList(actors))
    return { invalid: 'actors: must be null or a list of actor names' };
  if (workers !== null && typeof workers !== 'boolean')
    return { invalid: 'include_worker_sessions: must be true or false' };
  return {
    filter: {
      event_types: [...new Set((types ?? EVENT_TYPES) as readonly EventType[])],
      actors: actors ? [...new Set(actors)] : null,
      include_worker_sessions: workers ?? false,
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

// --- internal ---

/** The fields of a filter object (spec 2 §WebSocket stream). */
const FILTER_FIELDS = ['event_types', 'actors', 'include_worker_sessions'] as const;

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((x) => typeof x === 'string');
}
