/**
 * @module What each bus event does to the metrics (spec 1 §GET /metrics "Fed by"). Payloads are read
 * defensively: a field that is missing or outside its closed set becomes the label `unknown`.
 */
import type { Counter, Gauge, Histogram } from 'prom-client';
import type { KnownPayloads } from '../events/catalog.ts';
import { type Decimal, div, parseDecimal, toNumber } from '../lib/decimal.ts';
import type { DecimalCounter } from './decimal-counter.ts';
import {
  AUTH_FAILURE_REASONS,
  FINGERPRINT_VERSIONS,
  gatewayKeyLabel,
  IDENTITY_KINDS,
  identityLabel,
  JUDGE_KINDS,
  LLM_ERROR_CLASSES,
  modelLabel,
  oneOf,
  PROVIDERS,
  ROUTING_SLOTS,
  SUBJECT_KINDS,
  TOOL_ERROR_CLASSES,
  toolNameLabel,
  UNKNOWN,
} from './labels.ts';
import type { ToolNameCache } from './tool-name-cache.ts';

export interface Instruments {
  llmCalls: Counter<string>;
  llmLatency: Histogram<string>;
  llmCost: DecimalCounter<'provider' | 'model'>;
  routingDecisions: Counter<string>;
  routingLatency: Histogram<string>;
  patternMatches: Counter<string>;
  quotaRatio: Gauge<string>;
  evalVerdicts: Counter<string>;
  toolLatency: Histogram<string>;
  toolNames: ToolNameCache;
  /** The process's tool set, when it has one: other names count as `unknown`. */
  knownTools?: ReadonlySet<string>;
  llmErrors: Counter<string>;
  toolFailures: Counter<string>;
  authFailures: Counter<string>;
  keyCost: DecimalCounter<'gateway_key_id'>;
}

type Handlers = { [T in keyof KnownPayloads]?: (payload: Partial<KnownPayloads[T]>, m: Instruments) => void };

/** The events the collector subscribes to and their effect. */
export const EVENT_HANDLERS = {
  'llm.call_completed'(p, m) {
    const call = callLabels(p);
    // spec 1 table: a completed call (a client cancel included) counts as status ok
    m.llmCalls.inc({ ...call, status: 'ok' });
    observe(m.llmLatency, call, p.latency_ms);
    addCost(m, call, p);
  },
  'llm.call_failed'(p, m) {
    const call = callLabels(p);
    const errorClass = oneOf(LLM_ERROR_CLASSES, p.error_class);
    // the same event also counts as a call whose status is the error class (spec 1 table)
    m.llmCalls.inc({ ...call, status: errorClass });
    m.llmErrors.inc({ ...call, error_class: errorClass });
    observe(m.llmLatency, call, p.latency_ms);
    // a stream that broke after the provider reported usage carries that usage priced: the provider bills it,
    // and the budget and turn.completed count it, so the cost counters do too (the analytics spend reads
    // llm.call_completed only, spec 3)
    addCost(m, call, p);
  },
  'route.decided'(p, m) {
    const winner =
      Number.isInteger(p.winner_index) && p.winner_index! >= 0 ? p.chain?.[p.winner_index!] : undefined;
    m.routingDecisions.inc({
      winning_slot: oneOf(ROUTING_SLOTS, winner?.policy),
      chosen_model: modelLabel(p.chosen_model ?? winner?.model),
    });
    observe(m.routingLatency, {}, p.elapsed_ms);
  },
  'pattern.matched'(p, m) {
    m.patternMatches.inc({
      chose_model: modelLabel(p.chose_model),
      fingerprint_version: oneOf(FINGERPRINT_VERSIONS, p.fingerprint_version),
    });
  },
  'quota.alert'(p, m) {
    const ratio = typeof p.ratio === 'number' && Number.isFinite(p.ratio) ? p.ratio : ratioOf(p);
    if (ratio !== undefined) m.quotaRatio.set(identityLabels(p), ratio);
  },
  'gateway.quota_exceeded'(p, m) {
    // spec 1: a refused request pins the ratio to 1.0
    m.quotaRatio.set(identityLabels(p), 1);
  },
  'eval.completed'(p, m) {
    m.evalVerdicts.inc({
      judge_kind: oneOf(JUDGE_KINDS, p.judge_kind),
      subject_kind: oneOf(SUBJECT_KINDS, p.subject_kind),
    });
  },
  'tool.called'(p, m) {
    if (typeof p.tool_use_id !== 'string') return;
    const name = toolNameLabel(p.tool_name);
    m.toolNames.remember(p.tool_use_id, m.knownTools && !m.knownTools.has(name) ? UNKNOWN : name);
  },
  'tool.completed'(p, m) {
    observe(m.toolLatency, { tool_name: toolName(m, p.tool_use_id) }, p.latency_ms);
  },
  'tool.failed'(p, m) {
    const tool_name = toolName(m, p.tool_use_id);
    m.toolFailures.inc({ tool_name, error_class: oneOf(TOOL_ERROR_CLASSES, p.error_class) });
    observe(m.toolLatency, { tool_name }, p.latency_ms);
  },
  'gateway.auth_failed'(p, m) {
    m.authFailures.inc({ reason: oneOf(AUTH_FAILURE_REASONS, p.reason) });
  },
} satisfies Handlers;

// --- internal ---

function callLabels(p: { provider?: unknown; model?: unknown }): { provider: string; model: string } {
  return { provider: oneOf(PROVIDERS, p.provider), model: modelLabel(p.model) };
}

function identityLabels(p: { identity_kind?: unknown; identity_id?: unknown }) {
  return { identity_kind: oneOf(IDENTITY_KINDS, p.identity_kind), identity_id: identityLabel(p.identity_id) };
}

/** Observes milliseconds as seconds; a missing, negative or non-finite duration is not observed. */
function observe(h: Histogram<string>, labels: Record<string, string>, ms: unknown): void {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return;
  h.observe(labels, ms / 1000);
}

function toolName(m: Instruments, toolUseId: unknown): string {
  return (typeof toolUseId === 'string' && m.toolNames.take(toolUseId)) || UNKNOWN;
}

/** Adds a call's `cost_usd` to both cost counters; the counters themselves keep only positive amounts. */
function addCost(
  m: Instruments,
  call: { provider: string; model: string },
  p: { cost_usd?: unknown; gateway_key_id?: unknown },
): void {
  const cost = decimalOrUndefined(p.cost_usd);
  if (cost === undefined) return;
  m.llmCost.add(call, cost);
  m.keyCost.add({ gateway_key_id: gatewayKeyLabel(p.gateway_key_id) }, cost);
}

function decimalOrUndefined(value: unknown): Decimal | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  try {
    return parseDecimal(value);
  } catch {
    return undefined;
  }
}

function ratioOf(p: { spent_usd?: unknown; cap_usd?: unknown }): number | undefined {
  const spent = decimalOrUndefined(p.spent_usd);
  const cap = decimalOrUndefined(p.cap_usd);
  if (!spent || !cap || cap.units <= 0n) return undefined;
  return toNumber(div(spent, cap, 6));
}
