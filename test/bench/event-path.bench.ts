/**
 * What one answered gateway call's four events (route.decided, llm.call_started, llm.call_completed,
 * turn.completed, their payloads as the gateway stored them for the bench's OpenAI and Anthropic calls, taken
 * in turn) cost in one process: CPU µs (this thread) and KiB allocated (v8.GCProfiler) a call for the bus
 * (envelopes stamped and handed to the metrics collector and a trace-row builder, as in the gateway), the
 * collector alone, and the trace writer's row building alone; in this checkout and, with --against, another
 * (a `git worktree` of an older commit), alternated round by round. With --against, both collectors' /metrics
 * scrapes after the same calls must be byte-identical.
 *
 *   node test/bench/event-path.bench.ts
 *   node test/bench/event-path.bench.ts --against /tmp/base-worktree --rounds 7
 */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { ROOT } from '../helpers/svc.ts';

const { values: opts } = parseArgs({
  options: {
    against: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    calls: { type: 'string', default: '20000' },
  },
});
const rounds = Number(opts.rounds);
const calls = Number(opts.calls);

const KEY = 'gk_01M8MNP13RN6WA5XS6MAH45VJ7';
const SKETCH = Array.from(
  { length: 16 },
  (_, i) => `h1:${i}:${(0x996c34a8 + i * 0x1f2e3d4c).toString(16).slice(-8)}`,
);

/** One call's four events as the gateway publishes them (payloads as stored by a run of the bench). */
function callEvents(shape: 'openai' | 'anthropic', model: string, cost: string, latencyMs: number) {
  const who = { gateway_key_id: KEY, inbound_shape: shape, user_id: null, team_id: null };
  const attribution = {
    requested_model: model,
    model,
    provider: model.split(':')[0],
    ...who,
    parent_session_id: null,
  };
  return [
    {
      type: 'route.decided',
      actor: 'router',
      payload: {
        chain: [{ policy: 'per_message_override', model, verdict: 'accepted' }],
        winner_index: 0,
        chosen_model: model,
        elapsed_ms: 0.99,
        routing_policy_version: '90bc9a093ee8f5057115ee83a4ff393a9eccdffdc5a3530b7190d32f18976f73',
        requested_model: model,
        ...who,
        fingerprint: { structural: 's1:f9b2d15d13f142ae', sketch: SKETCH, messages: 1 },
        input_tokens_estimate: 184,
      },
    },
    { type: 'llm.call_started', actor: 'gateway', payload: { ...attribution, stream: false, attempt: 1 } },
    {
      type: 'llm.call_completed',
      actor: 'gateway',
      payload: {
        ...attribution,
        cost_usd: cost,
        pricing_version: 'builtin-2025-11-01',
        input_tokens: 193,
        output_tokens: 5,
        cached_input_tokens: 0,
        cache_creation_input_tokens: 0,
        latency_ms: latencyMs,
        ttft_ms: null,
        stop_reason: 'end_turn',
        error_class: null,
        attempts: 1,
        stream: false,
        usage: { cost_usd: cost },
      },
    },
    {
      type: 'turn.completed',
      actor: 'gateway',
      payload: {
        ...who,
        requested_model: model,
        model,
        provider: model.split(':')[0],
        status: 200,
        error_code: null,
        cost_usd: cost,
        latency_ms: latencyMs + 9.2,
      },
    },
  ].map((e) => ({ ...e, turn_id: 'req_01M8MNP13S2Z8Q7W0R5V3K6J4D' }));
}

const CALLS = [
  callEvents('openai', 'openai:gpt-5-mini', '0.00005825', 135.673),
  callEvents('anthropic', 'anthropic:claude-haiku-4-5', '0.000215', 38.806),
];

interface Checkout {
  name: string;
  variants: Record<string, (n: number) => void>;
  scrape: () => Promise<string>;
}

const checkouts = [await load(ROOT, 'this checkout')];
if (opts.against) checkouts.unshift(await load(resolve(opts.against), opts.against));
if (checkouts.length === 2) {
  for (const c of checkouts) c.variants.bus(1000);
  const [a, b] = await Promise.all(checkouts.map((c) => c.scrape()));
  if (a !== b) throw new Error('the two checkouts scrape differently after the same calls');
}

const names = Object.keys(checkouts[0].variants);
const samples = names.map(() => checkouts.map(() => ({ us: [] as number[], kib: [] as number[] })));
for (const c of checkouts) for (const name of names) c.variants[name](calls); // warm-up
for (let r = 0; r < rounds; r++)
  for (const [vi, name] of names.entries())
    for (const [ci, c] of checkouts.entries()) {
      const m = measure(c.variants[name], calls);
      samples[vi][ci].us.push(m.us);
      samples[vi][ci].kib.push(m.kib);
    }

console.log(
  `per gateway call (4 events), median of ${rounds} rounds of ${calls} calls: CPU µs / KiB allocated`,
);
console.log(['', ...checkouts.map((c) => c.name.slice(-24).padStart(26))].join('').padStart(12));
for (const [vi, name] of names.entries()) {
  const cells = samples[vi].map((s) => `${median(s.us).toFixed(2)} µs / ${median(s.kib).toFixed(2)} KiB`);
  console.log([name.padEnd(12), ...cells.map((x) => x.padStart(26))].join(''));
}

// --- internal ---

async function load(root: string, name: string): Promise<Checkout> {
  const src = (path: string) => import(join(root, 'src', path));
  const { createMetricsCollector } = await src('metrics/collector.ts');
  const { toRow } = await src('events/trace-writer.ts');
  const { createBus } = await src('events/bus.ts');
  const { createIdFactory } = await src('lib/ids.ts');
  const { systemClock } = await src('lib/time.ts');
  const { silentLogger: log } = await src('lib/log.ts');
  const collector = createMetricsCollector({ role: 'gateway', log, gauges: { keysActive: () => 1 } });
  const bus = createBus({ newId: createIdFactory(), clock: systemClock, log });
  const rows: unknown[] = [];
  const keep = (row: unknown) => {
    rows.push(row);
    if (rows.length > 512) rows.length = 0;
  };
  bus.subscribe({ name: 'rows', handle: (e: unknown) => keep(toRow(e)) });
  bus.subscribe(collector.subscriber);
  const stamped = CALLS.map((events) => events.map((e) => bus.stamp(e)));
  return {
    name,
    scrape: () => collector.scrape(),
    variants: {
      bus(n) {
        for (let i = 0; i < n; i++) for (const e of CALLS[i & 1]) bus.publish(e);
      },
      collector(n) {
        for (let i = 0; i < n; i++) for (const e of stamped[i & 1]) collector.subscriber.handle(e);
      },
      rows(n) {
        for (let i = 0; i < n; i++) for (const e of stamped[i & 1]) keep(toRow(e));
      },
    },
  };
}

/** CPU of this thread and bytes allocated on the JS heap (what collections freed plus what is left). */
function measure(fn: (n: number) => void, n: number): { us: number; kib: number } {
  const profiler = new v8.GCProfiler();
  const used = () => v8.getHeapStatistics().used_heap_size;
  profiler.start();
  const start = used();
  const cpu = process.threadCpuUsage();
  fn(n);
  const spent = process.threadCpuUsage(cpu);
  const end = used();
  const { statistics } = profiler.stop();
  let last = start;
  let allocated = 0;
  for (const s of statistics) {
    allocated += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - last);
    last = s.afterGC.heapStatistics.usedHeapSize;
  }
  allocated += Math.max(0, end - last);
  return { us: (spent.user + spent.system) / n, kib: allocated / n / 1024 };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
