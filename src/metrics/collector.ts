/**
 * @module The metrics collector of spec 1 §GET /metrics: sixteen metrics in a private prom-client
 * Registry, fed only by bus events (request code never touches a metric) and by gauge getters polled
 * at scrape. Handlers are synchronous and O(1); an exception is logged and swallowed. Counters and
 * histograms are kept in svc (series.ts, decimal-counter.ts) and written into prom-client when scraped.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Bus, Subscriber } from '../events/bus.ts';
import type { Logger } from '../lib/log.ts';
import { createDecimalCounter } from './decimal-counter.ts';
import { EVENT_HANDLERS, type Instruments } from './event-handlers.ts';
import { createCounterSeries, createHistogramSeries } from './series.ts';
import { createToolNameCache } from './tool-name-cache.ts';

export type MetricsRole = 'gateway' | 'agent';
type MetricType = 'counter' | 'gauge' | 'histogram';

interface MetricDefinition {
  readonly type: MetricType;
  readonly labels: readonly string[];
  readonly help: string;
  readonly buckets?: readonly number[];
  /** Only this process role exports the metric; both when absent. */
  readonly role?: MetricsRole;
}

/** spec 1 table: LLM call latency in seconds. */
export const LLM_LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0] as const;
/** 100 µs to 500 ms in 1-2.5-5 steps: in-process routing is sub-millisecond, a slow policy file read is not. */
export const ROUTING_LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
] as const;
/** 5 ms to 30 s in 1-2.5-5 steps: file reads at the low end, shell commands and delegates at the top. */
export const TOOL_LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

/** The closed metric set (STYLE rule 11): names, types, labels and buckets exactly as spec 1's table. */
export const METRICS = {
  svc_llm_calls_total: {
    type: 'counter',
    labels: ['provider', 'model', 'status'],
    help: 'LLM calls by outcome: status is ok or the error class.',
  },
  svc_llm_call_latency_seconds: {
    type: 'histogram',
    labels: ['provider', 'model'],
    help: 'LLM call latency (completed and failed calls).',
    buckets: LLM_LATENCY_BUCKETS,
  },
  svc_llm_cost_usd_total: {
    type: 'counter',
    labels: ['provider', 'model'],
    help: 'Cost of LLM calls in USD: completed calls and the billed part of failed ones (a stream broken after usage).',
  },
  svc_routing_decisions_total: {
    type: 'counter',
    labels: ['winning_slot', 'chosen_model'],
    help: 'Routing decisions by winning policy and chosen model.',
  },
  svc_pattern_matches_total: {
    type: 'counter',
    labels: ['chose_model', 'fingerprint_version'],
    help: 'Routing decisions won by the pattern policy (slot 4).',
  },
  svc_quota_used_ratio: {
    type: 'gauge',
    labels: ['identity_kind', 'identity_id'],
    help: 'Share of a spend cap used at the last alert; 1 once a request was refused.',
  },
  svc_eval_verdicts_total: {
    type: 'counter',
    labels: ['judge_kind', 'subject_kind'],
    help: 'Completed evaluations.',
  },
  svc_session_count: {
    type: 'gauge',
    labels: [],
    help: 'Agent sessions in the trace store.',
    role: 'agent',
  },
  svc_gateway_keys_active: {
    type: 'gauge',
    labels: [],
    help: 'Gateway keys whose effective status is active at scrape time.',
    role: 'gateway',
  },
  svc_gateway_keys_revoked: {
    type: 'gauge',
    labels: [],
    help: 'Gateway keys revoked or past their grace period at scrape time.',
    role: 'gateway',
  },
  svc_routing_decision_latency_seconds: {
    type: 'histogram',
    labels: [],
    help: 'Time the routing chain took to decide.',
    buckets: ROUTING_LATENCY_BUCKETS,
  },
  svc_tool_call_latency_seconds: {
    type: 'histogram',
    labels: ['tool_name'],
    help: 'Tool call latency (completed and failed calls).',
    buckets: TOOL_LATENCY_BUCKETS,
  },
  svc_llm_call_errors_total: {
    type: 'counter',
    labels: ['provider', 'model', 'error_class'],
    help: 'Failed LLM calls by error class.',
  },
  svc_tool_failures_total: {
    type: 'counter',
    labels: ['tool_name', 'error_class'],
    help: 'Failed tool calls by error class.',
  },
  svc_gateway_auth_failures_total: {
    type: 'counter',
    labels: ['reason'],
    help: 'Gateway requests rejected at authentication.',
  },
  svc_gateway_key_cost_usd_total: {
    type: 'counter',
    labels: ['gateway_key_id'],
    help: 'Cost of LLM calls in USD per gateway key: completed calls and the billed part of failed ones.',
  },
} as const satisfies Record<string, MetricDefinition>;

export type MetricName = keyof typeof METRICS;
export const METRIC_NAMES = Object.keys(METRICS) as MetricName[];

/** Names a collector of `role` exports (the gateway omits svc_session_count, the agent the key gauges). */
export function metricNamesFor(role: MetricsRole): MetricName[] {
  return METRIC_NAMES.filter((name) => {
    const def: MetricDefinition = METRICS[name];
    return def.role === undefined || def.role === role;
  });
}

/** Polled at each scrape; a getter that throws keeps the previous value. */
export interface GaugeGetters {
  keysActive?: () => number;
  keysRevoked?: () => number;
  sessionCount?: () => number;
}

export interface MetricsCollectorOptions {
  role: MetricsRole;
  /** When given, the collector subscribes itself (emits bus.subscriber_registered). */
  bus?: Bus;
  log: Logger;
  gauges?: GaugeGetters;
  /**
   * The tools this process runs (the agent server's closed tool set). A tool.called for any other name (a
   * model that calls a tool that does not exist) counts as `unknown`, so model output cannot grow the
   * tool_name label without bound (spec 1: the metric set is bounded).
   */
  toolNames?: readonly string[];
}

export interface MetricsCollector {
  readonly registry: Registry;
  readonly subscriber: Subscriber;
  /** The exposition text of every metric of this role. */
  scrape(): Promise<string>;
  /** `text/plain; version=0.0.4; charset=utf-8` */
  readonly contentType: string;
  /** Unsubscribes from the bus (no-op when no bus was given). */
  stop(): void;
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
export const METRICS_SUBSCRIBER_NAME = 'metrics';

export function createMetricsCollector(options: MetricsCollectorOptions): MetricsCollector {
  const { role, log } = options;
  const registry = new Registry();
  const instruments = createInstruments(registry, role, log, options.gauges ?? {}, options.toolNames);
  const subscriber: Subscriber = {
    name: METRICS_SUBSCRIBER_NAME,
    types: Object.keys(EVENT_HANDLERS) as Array<keyof typeof EVENT_HANDLERS>,
    handle(event) {
      try {
        EVENT_HANDLERS[event.type as keyof typeof EVENT_HANDLERS]?.(event.payload as never, instruments);
      } catch (err) {
        // spec 1: a handler exception is logged and swallowed; the bus never sees it
        log.warn('metrics handler failed', { event_type: event.type, event_id: event.id, err });
      }
    },
  };
  const unsubscribe = options.bus?.subscribe(subscriber);
  return {
    registry,
    subscriber,
    scrape: () => registry.metrics(),
    contentType: METRICS_CONTENT_TYPE,
    stop: () => unsubscribe?.(),
  };
}

// --- internal ---

function createInstruments(
  registry: Registry,
  role: MetricsRole,
  log: Logger,
  gauges: GaugeGetters,
  toolNames: readonly string[] | undefined,
) {
  const counter = (name: MetricName) => createCounterSeries(METRICS[name].labels);
  const histogram = (name: MetricName) => {
    const def: MetricDefinition = METRICS[name];
    return createHistogramSeries(def.labels, def.buckets ?? []);
  };
  const kept = {
    llmCalls: counter('svc_llm_calls_total'),
    llmLatency: histogram('svc_llm_call_latency_seconds'),
    llmCost: createDecimalCounter(METRICS.svc_llm_cost_usd_total.labels),
    routingDecisions: counter('svc_routing_decisions_total'),
    routingLatency: histogram('svc_routing_decision_latency_seconds'),
    patternMatches: counter('svc_pattern_matches_total'),
    evalVerdicts: counter('svc_eval_verdicts_total'),
    toolLatency: histogram('svc_tool_call_latency_seconds'),
    toolNames: createToolNameCache(),
    knownTools: toolNames && new Set(toolNames),
    llmErrors: counter('svc_llm_call_errors_total'),
    toolFailures: counter('svc_tool_failures_total'),
    authFailures: counter('svc_gateway_auth_failures_total'),
    keyCost: createDecimalCounter(METRICS.svc_gateway_key_cost_usd_total.labels),
  };
  const polled = (name: MetricName, getter: (() => number) | undefined) =>
    function collect(this: Gauge) {
      if (!getter) return;
      try {
        const value = getter();
        if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
        this.set(value);
      } catch (err) {
        log.warn('metrics gauge getter failed; keeping the previous value', { metric: name, err });
      }
    };
  /** Each counter and histogram is written from the series svc keeps when it is scraped. */
  const exported = (series: { export(metric: any): void }) =>
    function collect(this: Counter | Histogram) {
      series.export(this);
    };
  const collectors: Partial<Record<MetricName, (this: any) => void>> = {
    svc_llm_calls_total: exported(kept.llmCalls),
    svc_llm_call_latency_seconds: exported(kept.llmLatency),
    svc_llm_cost_usd_total: exported(kept.llmCost),
    svc_routing_decisions_total: exported(kept.routingDecisions),
    svc_pattern_matches_total: exported(kept.patternMatches),
    svc_eval_verdicts_total: exported(kept.evalVerdicts),
    svc_session_count: polled('svc_session_count', gauges.sessionCount),
    svc_gateway_keys_active: polled('svc_gateway_keys_active', gauges.keysActive),
    svc_gateway_keys_revoked: polled('svc_gateway_keys_revoked', gauges.keysRevoked),
    svc_routing_decision_latency_seconds: exported(kept.routingLatency),
    svc_tool_call_latency_seconds: exported(kept.toolLatency),
    svc_llm_call_errors_total: exported(kept.llmErrors),
    svc_tool_failures_total: exported(kept.toolFailures),
    svc_gateway_auth_failures_total: exported(kept.authFailures),
    svc_gateway_key_cost_usd_total: exported(kept.keyCost),
  };
  // registered in table order, which is the exposition order
  let quotaRatio: Gauge | undefined;
  for (const name of metricNamesFor(role)) {
    const def: MetricDefinition = METRICS[name];
    const config = {
      name,
      help: def.help,
      labelNames: def.labels,
      registers: [registry],
      collect: collectors[name],
    };
    if (def.type === 'counter') new Counter(config);
    else if (def.type === 'histogram') new Histogram({ ...config, buckets: [...(def.buckets ?? [])] });
    else if (name === 'svc_quota_used_ratio') quotaRatio = new Gauge(config);
    else new Gauge(config);
  }
  const instruments: Instruments = { ...kept, quotaRatio: quotaRatio! };
  return instruments;
}
