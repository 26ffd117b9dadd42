/**
 * @module What each bus event does to the metrics (spec 1 §GET /metrics "Fed by"). Payloads are read
 * defensively: a field that is missing or outside its closed set becomes the label `unknown`.
 */
import type { Gauge } from 'prom-client';
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
import type { CounterSeries, HistogramSeries } from './series.ts';
import type { ToolNameCache } from './tool-name-cache.ts';

/** Label values go in each metric's label-name order (collector.ts METRICS). */
export interface Instruments {
  /** provider, model, status */
  llmCalls: CounterSeries;
  /** provider, model */
  llmLatency: HistogramSeries;
  /** provider, model */
  llmCost: DecimalCounter;
  /** winning_slot, chosen_model */
  routingDecisions: CounterSeries;
  routingLatency: HistogramSeries;
  /** chose_model, fingerprint_version */
  patternMatches: CounterSeries;
  quotaRatio: Gauge<string>;
  /** judge_kind, subject_kind */
  evalVerdicts: CounterSeries;
  /** tool_name */
  toolLatency: HistogramSeries;
  toolNames: ToolNameCache;
  /** The process's tool set, when it has one: other names count as `unknown`. */
  knownTools?: ReadonlySet<string>;
  /** provider, model, error_class */
  llmErrors: CounterSeries;
  /** tool_name, error_class */
  toolFailures: CounterSeries;
  /** reason */
  authFailures: CounterSeries;
  /** gateway_key_id */
  keyCost: DecimalCounter;
}

type Handlers = { [T in keyof KnownPayloads]?: (payload: Partial<KnownPayloads[T]>, m: Instruments) => void };

/** The events the collector subscribes to and their effect. */
export const EVENT_HANDLERS = {
  'llm.call_completed'(p, m) {
    const provider = oneOf(PROVIDERS, p.provider);
    const model = modelLabel(p.model);
    // spec 1 table: a completed call (a client cancel included) counts as status ok
    m.llmCalls.inc(provider, model, 'ok');
    observe(m.llmLatency, p.latency_ms, provider, model);
    addCost(m, p, provider, model);
  },
  'llm.call_failed'(p, m) {
    const provider = oneOf(PROVIDERS, p.provider);
    const model = modelLabel(p.model);
    const errorClass = oneOf(LLM_ERROR_CLASSES, p.error_class);
    // the same event also counts as a call whose status is the error class (spec 1 table)
    m.llmCalls.inc(provider, model, errorClass);
    m.llmErrors.inc(provider, model, errorClass);
    observe(m.llmLatency, p.latency_ms, provider, model);
    // a stream that broke after the provider reported usage carries that usage priced: the provider bills it,
    // and the budget and turn.completed count it, so the cost counters do too (the analytics spend reads
    // llm.call_completed only, spec 3)
    addCost(m, p, provider, model);
  },
  'route.decided'(p, m) {
    const winner =
      Number.isInteger(p.winner_index) && p.winner_index! >= 0 ? p.chain?.[p.winner_index!] : undefined;
    m.routingDecisions.inc(oneOf(ROUTING_SLOTS, winner?.policy), modelLabel(p.chosen_model ?? winner?.model));
    observe(m.routingLatency, p.elapsed_ms);
  },
  'pattern.matched'(p, m) {
    m.patternMatches.inc(modelLabel(p.chose_model), oneOf(FINGERPRINT_VERSIONS, p.fingerprint_version));
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
    m.evalVerdicts.inc(oneOf(JUDGE_KINDS, p.judge_kind), oneOf(SUBJECT_KINDS, p.subject_kind));
  },
  'tool.called'(p, m) {
    if (typeof p.tool_use_id !== 'string') return;
    const name = toolNameLabel(p.tool_name);
    m.toolNames.remember(p.tool_use_id, m.knownTools && !m.knownTools.has(name) ? UNKNOWN : name);
  },
  'tool.completed'(p, m) {
    observe(m.toolLatency, p.latency_ms, toolName(m, p.tool_use_id));
  },
  'tool.failed'(p, m) {
    const name = toolName(m, p.tool_use_id);
    m.toolFailures.inc(name, oneOf(TOOL_ERROR_CLASSES, p.error_class));
    observe(m.toolLatency, p.latency_ms, name);
  },
  'gateway.auth_failed'(p, m) {
    m.authFailures.inc(oneOf(AUTH_FAILURE_REASONS, p.reason));
  },
} satisfies Handlers;

// --- internal ---

function identityLabels(p: { identity_kind?: unknown; identity_id?: unknown }) {
  return { identity_kind: oneOf(IDENTITY_KINDS, p.identity_kind), identity_id: identityLabel(p.identity_id) };
}

/** Observes milliseconds as seconds; a missing, negative or non-finite duration is not observed. */
function observe(h: HistogramSeries, ms: unknown, a?: string, b?: string): void {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return;
  h.observe(ms / 1000, a, b);
}

function toolName(m: Instruments, toolUseId: unknown): string {
  return (typeof toolUseId === 'string' && m.toolNames.take(toolUseId)) || UNKNOWN;
}

/** Adds a call's `cost_usd` to both cost counters; the counters themselves keep only positive amounts. */
function addCost(
  m: Instruments,
  p: { cost_usd?: unknown; gateway_key_id?: unknown },
  provider: string,
  model: string,
): void {
  const cost = decimalOrUndefined(p.cost_usd);
  if (cost === undefined) return;
  m.llmCost.add(cost, provider, model);
  m.keyCost.add(cost, gatewayKeyLabel(p.gateway_key_id));
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
