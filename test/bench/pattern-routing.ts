/**
 * Learned routing (issue 14): records a mix of requests through the real gateway and the fake provider
 * (clients naming `fast`; one kind that haiku gets wrong is retried on `balanced`), then replays a fresh
 * mix of the same kinds with `model: auto` on copies of that store with slot 4 off, structural and hybrid,
 * and reports the cost of each replay from the trace, what GET /analytics/savings says about it (svc serve
 * on the same store, baseline the global default), which model each kind went to, and, in process, what a
 * fingerprint, a table lookup and a whole routing decision cost per request and what a rebuild reads.
 *
 *   npm run bench:pattern                 # the mix below, about 30 s
 *   npm run bench:pattern -- --scale 200000   # also time a rebuild over a synthetic store of that many requests
 *   npm run bench:pattern -- --out pattern.json
 */
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import type { CanonicalRequest } from '#src/canonical/request.ts';
import { formatDecimal, sumDecimals } from '#src/lib/decimal.ts';
import { loadModelRegistry } from '#src/models/registry.ts';
import { resolveRoute } from '#src/routing/chain.ts';
import { compilePolicyText } from '#src/routing/compile-policy.ts';
import type { FingerprintVersion } from '#src/routing/pattern/fingerprint.ts';
import { fingerprintRequest } from '#src/routing/pattern/fingerprint.ts';
import { queryPatternStats } from '#src/routing/pattern/stats-query.ts';
import { buildPatternTable, lookupPattern } from '#src/routing/pattern/table.ts';
import { describeRequest, lastUserText } from '#src/routing/request-facts.ts';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import { waitForPatternRebuild } from '../helpers/pattern-rebuilt.ts';
import { isolatedEnv, makeTempDir, startSvc } from '../helpers/svc.ts';
import { seedSyntheticHistory } from './pattern-history.ts';

const { values: opts } = parseArgs({
  options: { scale: { type: 'string' }, out: { type: 'string' } },
});

const SONNET = 'anthropic:claude-sonnet-4-5';
const WORKSPACE = '/tmp'; // issue-key's workspace in gateway-keys.ts
const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const TOOLS = ['read_file', 'run_command'].map((name) => ({
  type: 'function' as const,
  function: { name, parameters: { type: 'object', properties: { path: { type: 'string' } } } },
}));

type Kind = 'fix' | 'summarize' | 'design' | 'screenshot';
interface Item {
  kind: Kind;
  text: string;
}

/** Kinds of request, each with its own six-letter subject so no two prompts are the same. */
const TEMPLATES: Record<Kind, (name: string) => string> = {
  fix: (n) => `fix the failing test in ${n}.test.ts and explain the cause`,
  summarize: (n) => `summarize the changes in ${n}.ts for the changelog`,
  design: (n) => `design a migration plan for the ${n} database tables`,
  screenshot: (n) => `what does this ${n} screenshot show`,
};
const MIX: Record<Kind, number> = { fix: 60, summarize: 60, design: 40, screenshot: 25 };

async function main(): Promise<void> {
  const fake = await startFakeProvider();
  const root = makeTempDir('svc-bench-pattern-');
  try {
    const files = gatewayFiles(root.dir, {
      ...fakeProviderEnv(fake, ['anthropic', 'openai']),
      SVC_GATEWAY_MAX_RETRIES: '0',
      SVC_PATTERN_REFRESH_MS: '3600000',
    });
    const { token } = await issueKey(files.env);
    const recorded = mixOf(0);
    const replay = mixOf(1);

    // 1. the recorded history: clients name `fast`; a design answer from haiku is retried on `balanced`
    const gw = await startSvc(['gateway', '--port', '{port}'], { env: files.env });
    for (const item of recorded) {
      await send(gw.url, token, 'fast', item);
      if (item.kind === 'design') await send(gw.url, token, 'balanced', item);
    }
    await gw.stop();
    console.log(`recorded ${recorded.length} requests (+${MIX.design} retries of design on balanced)`);

    // 2. the replay, once per setting, each on its own copy of the recorded store
    const runs = [];
    for (const mode of ['off', 'structural', 'hybrid'] as const)
      runs.push(await replayRun(mode, files, token, replay, root.dir));
    printRuns(runs);

    // 3. in process: fingerprint, lookup and decision per request; what one rebuild reads
    const micro = measureLookups(files.db, replay);
    const scale = opts.scale ? await rebuildAtScale(Number(opts.scale), root.dir) : null;
    printMicro(micro, scale);
    if (opts.out) writeFileSync(opts.out, `${JSON.stringify({ runs, micro, scale }, null, 2)}\n`);
  } finally {
    await fake.close();
    root.cleanup();
  }
}

// --- the replay runs ---

interface Run {
  mode: 'off' | 'structural' | 'hybrid';
  requests: number;
  costUsd: string;
  slot4Wins: number;
  modelsByKind: Record<Kind, Record<string, number>>;
  routeMsP50: number;
  routeMsP99: number;
  savings: Record<string, unknown> | string;
}

async function replayRun(
  mode: Run['mode'],
  files: ReturnType<typeof gatewayFiles>,
  token: string,
  replay: Item[],
  dir: string,
): Promise<Run> {
  const db = join(dir, `replay-${mode}.db`);
  copyFileSync(files.db, db);
  for (const ext of ['-wal', '-shm']) if (existsSync(files.db + ext)) copyFileSync(files.db + ext, db + ext);
  const routing = join(dir, `routing-${mode}.yaml`);
  writeFileSync(
    routing,
    mode === 'off' ? 'pattern: { enabled: false }\n' : `pattern: { enabled: true, fingerprint: ${mode} }\n`,
  );
  const env = { ...files.env, SVC_GATEWAY_DB_PATH: db, SVC_ROUTING_POLICY: routing };
  const gw = await startSvc(['gateway', '--port', '{port}'], { env });
  if (mode !== 'off') await waitForPatternRebuild(gw.output, (l) => (l.keys ?? 0) > 0);
  const from = new Date().toISOString();
  const turns = new Map<string, Kind>();
  for (const item of replay) turns.set(await send(gw.url, token, 'auto', item), item.kind);
  const to = new Date(Date.now() + 1000).toISOString();
  await gw.stop();

  const conn = new DatabaseSync(db);
  const rows = conn
    .prepare(
      `SELECT turn_id, type, payload FROM events WHERE type IN ('route.decided', 'turn.completed') AND timestamp >= ?`,
    )
    .all(from) as Array<{ turn_id: string; type: string; payload: string }>;
  conn.close();
  const modelsByKind = { fix: {}, summarize: {}, design: {}, screenshot: {} } as Run['modelsByKind'];
  const costs: string[] = [];
  const elapsed: number[] = [];
  let slot4Wins = 0;
  for (const r of rows) {
    const kind = turns.get(r.turn_id);
    if (!kind) continue;
    const p = JSON.parse(r.payload);
    if (r.type === 'turn.completed') costs.push(p.cost_usd);
    else {
      elapsed.push(p.elapsed_ms);
      if (p.chain[p.winner_index]?.policy === 'pattern') slot4Wins++;
      modelsByKind[kind][p.chosen_model] = (modelsByKind[kind][p.chosen_model] ?? 0) + 1;
    }
  }
  elapsed.sort((a, b) => a - b);
  return {
    mode,
    requests: turns.size,
    costUsd: formatDecimal(sumDecimals(costs)),
    slot4Wins,
    modelsByKind,
    routeMsP50: elapsed[Math.floor(elapsed.length * 0.5)],
    routeMsP99: elapsed[Math.min(elapsed.length - 1, Math.floor(elapsed.length * 0.99))],
    savings: await savingsOf(db, dir, from, to),
  };
}

/** GET /analytics/savings from svc serve on the replayed store, against the global default. */
async function savingsOf(
  db: string,
  dir: string,
  from: string,
  to: string,
): Promise<Record<string, unknown> | string> {
  const serve = await startSvc(['serve', '--port', '{port}'], {
    env: isolatedEnv(dir, { SVC_DB_PATH: db }),
    readyPath: '/health',
  });
  try {
    const q = new URLSearchParams({ baseline: SONNET, from, to });
    const res = await fetch(`${serve.url}/analytics/savings?${q}`);
    if (res.status !== 200) return `HTTP ${res.status}: ${await res.text()}`;
    return ((await res.json()) as { data: Record<string, unknown> }).data;
  } finally {
    await serve.stop();
  }
}

/** One chat-completions request; returns the turn id (svc-request-id). */
async function send(url: string, token: string, model: string, item: Item): Promise<string> {
  const content =
    item.kind === 'screenshot'
      ? [
          { type: 'text', text: item.text },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_1X1}` } },
        ]
      : item.text;
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: [{ role: 'user', content }],
      ...(item.kind === 'fix' ? { tools: TOOLS } : {}),
    }),
  });
  await res.text();
  if (res.status !== 200) throw new Error(`${model} ${item.kind}: HTTP ${res.status}`);
  return res.headers.get('svc-request-id')!;
}

// --- in process ---

interface Micro {
  fingerprintUs: number;
  lookupNs: Record<FingerprintVersion, number>;
  decisionUs: Record<FingerprintVersion, number>;
  rebuildMs: Record<FingerprintVersion, number>;
  recordedEvents: number;
}

function measureLookups(dbPath: string, replay: Item[]): Micro {
  const registry = loadModelRegistry(undefined);
  const facts = replay.map((item) => describeRequest(canonicalOf(item), { workspacePath: WORKSPACE }));
  const texts = replay.map((item) => lastUserText(canonicalOf(item)));
  const prints = facts.map((f, i) => fingerprintRequest(f, texts[i]));
  const db = new DatabaseSync(dbPath, { readOnly: true });
  const recordedEvents = Number((db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n);
  const out: Micro = {
    fingerprintUs: 0,
    lookupNs: {} as never,
    decisionUs: {} as never,
    rebuildMs: {} as never,
    recordedEvents,
  };
  out.fingerprintUs =
    perOp(20_000, (i) => fingerprintRequest(facts[i % facts.length], texts[i % texts.length])) * 1e3;
  for (const version of ['structural', 'hybrid'] as const) {
    const policy = compilePolicyText(`pattern: { enabled: true, fingerprint: ${version} }`, 'bench', {
      registry,
    }).policy!;
    const started = performance.now();
    const rows = queryPatternStats(db, { sinceUs: 0, version, minSamples: policy.pattern.minSamples });
    out.rebuildMs[version] = performance.now() - started;
    const table = buildPatternTable(rows, policy.pattern, Date.now() * 1000);
    out.lookupNs[version] = perOp(200_000, (i) => lookupPattern(table, prints[i % prints.length])) * 1e6;
    const hooks = { pattern: (_f: unknown, p: (typeof prints)[number]) => lookupPattern(table, p) };
    const ctx = { policy, registry, availableAdapters: new Set(['anthropic', 'openai']), hooks };
    out.decisionUs[version] =
      perOp(20_000, (i) => resolveRoute({ ...facts[i % facts.length], text: texts[i % texts.length] }, ctx)) *
      1e3;
  }
  db.close();
  return out;
}

interface Scale {
  requests: number;
  events: number;
  ms: Record<FingerprintVersion, number>;
}

/** What the rebuild worker's statement costs over a store of `requests` synthetic routed requests. */
async function rebuildAtScale(requests: number, dir: string): Promise<Scale> {
  const path = join(dir, 'scale.db');
  const events = await seedSyntheticHistory(path, requests);
  const db = new DatabaseSync(path, { readOnly: true });
  const ms = {} as Record<FingerprintVersion, number>;
  for (const version of ['structural', 'hybrid'] as const) {
    const started = performance.now();
    queryPatternStats(db, { sinceUs: 0, version, minSamples: 20 });
    ms[version] = performance.now() - started;
  }
  db.close();
  return { requests, events, ms };
}

/** Milliseconds per call of `fn` after a warm-up. */
function perOp(n: number, fn: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(n, 5_000); i++) fn(i);
  const started = performance.now();
  for (let i = 0; i < n; i++) fn(i);
  return (performance.now() - started) / n;
}

function canonicalOf(item: Item): CanonicalRequest {
  return {
    model: 'auto',
    system: [],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: item.text },
          ...(item.kind === 'screenshot'
            ? [
                {
                  type: 'image' as const,
                  source: { type: 'base64' as const, media_type: 'image/png' as const, data: PNG_1X1 },
                },
              ]
            : []),
        ],
      },
    ],
    tools:
      item.kind === 'fix'
        ? TOOLS.map((t) => ({
            type: 'function' as const,
            name: t.function.name,
            input_schema: t.function.parameters,
          }))
        : undefined,
    stream: false,
    include_usage: false,
  };
}

/** The mix, interleaved by kind; `round` picks another set of subjects (the replay never repeats a prompt). */
function mixOf(round: number): Item[] {
  const items: Item[] = [];
  const kinds = Object.keys(MIX) as Kind[];
  for (let i = 0; items.length < kinds.reduce((n, k) => n + MIX[k], 0); i++)
    for (const kind of kinds)
      if (i < MIX[kind])
        items.push({ kind, text: TEMPLATES[kind](subject(round * 1000 + i * 7 + kind.length)) });
  return items;
}

/** A pronounceable six-letter name for `n`. */
function subject(n: number): string {
  const c = 'bdfgklmnprstvz';
  const v = 'aeiou';
  let s = '';
  for (let k = 0, x = n * 7919 + 13; k < 3; k++, x = Math.floor(x / 70))
    s += c[x % c.length] + v[Math.floor(x / c.length) % v.length];
  return s;
}

// --- report ---

function printRuns(runs: Run[]): void {
  const off = runs[0];
  console.log(
    '\nreplay: the same fresh mix with model "auto", once per setting (cost from the trace: turn.completed cost_usd)',
  );
  console.log(
    'setting      requests  slot-4 wins  cost USD     vs off     route p50/p99 ms  savings vs sonnet (GET /analytics/savings)',
  );
  for (const r of runs) {
    const diff = Number(r.costUsd) / Number(off.costUsd) - 1;
    const s =
      typeof r.savings === 'string'
        ? r.savings
        : `${r.savings.savings_usd} USD (${fmtPct(r.savings.savings_pct as number | null)})`;
    console.log(
      `${r.mode.padEnd(12)} ${String(r.requests).padStart(8)}  ${String(r.slot4Wins).padStart(11)}  ${r.costUsd.padStart(10)}  ${fmtPct(diff).padStart(8)}  ${`${r.routeMsP50.toFixed(3)}/${r.routeMsP99.toFixed(3)}`.padStart(16)}  ${s}`,
    );
  }
  console.log('\nmodel per kind');
  for (const r of runs)
    console.log(
      `${r.mode.padEnd(12)} ${Object.entries(r.modelsByKind)
        .map(
          ([k, m]) =>
            `${k}: ${Object.entries(m)
              .map(([model, n]) => `${model.split(':')[1]}×${n}`)
              .join(' ')}`,
        )
        .join('  |  ')}`,
    );
}

function printMicro(m: Micro, scale: Scale | null): void {
  console.log('\nin process (per request, this machine):');
  console.log(`  fingerprints (structural + 16-band sketch): ${m.fingerprintUs.toFixed(2)} µs`);
  for (const v of ['structural', 'hybrid'] as const)
    console.log(
      `  ${v.padEnd(10)} table lookup ${m.lookupNs[v].toFixed(0)} ns; whole decision (7 slots, fingerprint included) ${m.decisionUs[v].toFixed(2)} µs; rebuild read over the recorded store (${m.recordedEvents} events) ${m.rebuildMs[v].toFixed(1)} ms`,
    );
  if (scale)
    console.log(
      `  rebuild read at scale: ${scale.requests} requests (${scale.events} events): structural ${(scale.ms.structural / 1000).toFixed(2)} s, hybrid ${(scale.ms.hybrid / 1000).toFixed(2)} s (in the worker thread, every SVC_PATTERN_REFRESH_MS)`,
    );
}

function fmtPct(x: number | null): string {
  return x === null ? 'n/a' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
}

await main();
