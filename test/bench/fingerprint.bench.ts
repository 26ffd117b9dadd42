/**
 * What the request fingerprint (structural s1 + hybrid sketch h1, computed on every gateway request for
 * route.decided) costs: CPU µs per call (process.cpuUsage over many calls) for the bench prompt, a 4 KB
 * prompt, one with letters outside ASCII, one whose only non-ASCII characters are punctuation and emoji,
 * and distinct texts (no repeated input), in this checkout and, with --against, in another checkout of svc
 * (a `git worktree` of an older commit), alternated round by round in one process.
 *
 *   node test/bench/fingerprint.bench.ts
 *   node test/bench/fingerprint.bench.ts --against /tmp/base-worktree --rounds 7
 */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { decodeOpenAIRequest } from '#src/gateway/shapes/openai/decode.ts';
import type { RouteFacts } from '#src/routing/facts.ts';
import { fingerprintRequest } from '#src/routing/pattern/fingerprint.ts';
import { describeRequest, lastUserText } from '#src/routing/request-facts.ts';
import { benchRequest } from './requests.ts';

// biome-ignore format: one list
const WORDS = [
  'deploy', 'latency', 'request', 'service', 'profile', 'handler', 'parseConfig', 'user_store', 'TS2322',
  'the', 'and', 'of', 'to', 'check', 'memory', 'leak', 'queue', 'retryCount', 'database', 'index', 'slow',
  'query', 'cache', 'miss', 'HTTPServer', 'timeout', 'error', 'stack', 'trace', 'line', '104', 'worker',
  'thread', 'pool', 'socket', 'reset', 'after', 'before', 'build', 'test', 'failing', 'auth', 'billing',
];

type Fingerprint = (facts: RouteFacts, text: string) => unknown;

const { values: opts } = parseArgs({
  options: {
    against: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    calls: { type: 'string', default: '40000' },
  },
});
const rounds = Number(opts.rounds);
const calls = Number(opts.calls);

interface Case {
  name: string;
  facts: RouteFacts[];
  texts: string[];
}

const cases = buildCases();
const impls: Array<{ name: string; fn: Fingerprint }> = [{ name: 'this checkout', fn: fingerprintRequest }];
if (opts.against) {
  const file = join(resolve(opts.against), 'src/routing/pattern/fingerprint.ts');
  const other = (await import(file)) as { fingerprintRequest: Fingerprint };
  impls.unshift({ name: opts.against, fn: other.fingerprintRequest });
  for (const c of cases) {
    const a = JSON.stringify(c.texts.map((t, i) => other.fingerprintRequest(c.facts[i], t)));
    const b = JSON.stringify(c.texts.map((t, i) => fingerprintRequest(c.facts[i], t)));
    if (a !== b) throw new Error(`${c.name}: the two checkouts fingerprint differently`);
  }
}

const samples = cases.map(() => impls.map(() => [] as number[]));
for (const c of cases) for (const impl of impls) usPerCall(impl.fn, c, 5_000); // warm-up
for (let r = 0; r < rounds; r++)
  for (const [ci, c] of cases.entries())
    for (const [ii, impl] of impls.entries()) samples[ci][ii].push(usPerCall(impl.fn, c, calls));

console.log(`CPU µs per fingerprint, median of ${rounds} rounds of ${calls} calls`);
console.log(
  [
    'case'.padEnd(34),
    ...impls.map((i) => i.name.slice(-22).padStart(22)),
    opts.against ? '  ratio' : '',
  ].join(''),
);
for (const [ci, c] of cases.entries()) {
  const med = samples[ci].map(median);
  const ratio = med.length === 2 ? `  ${(med[1] / med[0]).toFixed(2)}x` : '';
  console.log([c.name.padEnd(34), ...med.map((m) => m.toFixed(2).padStart(22)), ratio].join(''));
}

// --- internal ---

function usPerCall(fn: Fingerprint, c: Case, n: number): number {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) fn(c.facts[i % c.facts.length], c.texts[i % c.texts.length]);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Facts and last user text of a Chat Completions body, as the gateway describes it. */
function requestOf(body: unknown): { facts: RouteFacts; text: string } {
  const req = decodeOpenAIRequest(body);
  return { facts: describeRequest(req, { workspacePath: '/srv/app' }), text: lastUserText(req) };
}

function buildCases(): Case[] {
  const bench = JSON.parse(benchRequest('openai', 'token').body) as { messages: unknown[] };
  const withUser = (content: string) => ({
    ...bench,
    messages: [bench.messages[0], { role: 'user', content }],
  });
  const prose = (seed: number, length: number) => {
    let s = seed;
    let out = '';
    while (out.length < length) {
      s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0;
      out += `${WORDS[s % WORDS.length]}${s % 7 === 0 ? '. ' : ' '}`;
    }
    return out.slice(0, length);
  };
  const one = (name: string, body: unknown): Case => {
    const { facts, text } = requestOf(body);
    return { name, facts: [facts], texts: [text] };
  };
  const distinct = Array.from({ length: 1024 }, (_, i) => requestOf(withUser(prose(i + 1, 360))));
  return [
    one('bench prompt (353 chars)', bench),
    one('4 KB prompt', withUser(prose(99, 4096))),
    one('non-ASCII prompt (360 chars)', withUser(`${prose(5, 330)} café 日本語のテスト`)),
    one('quotes, dashes, emoji (360 chars)', withUser(`${prose(6, 330)} don’t “retry” — 🚀 …`)),
    {
      name: '1,024 distinct prompts (360 chars)',
      facts: distinct.map((d) => d.facts),
      texts: distinct.map((d) => d.text),
    },
  ];
}
