/**
 * Upstream faults through a gateway whose provider is the counting proxy in front of the fake: answers
 * that are not the provider's response object must reach the client as an error in its shape and be
 * recorded as `llm.call_failed`, never as a $0 success; and one user call through an official SDK with
 * its default retries must not multiply into gateway retries × SDK retries upstream calls.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { rssKbOf } from '../proc.ts';
import { type ProbeRequest, send, type Wire } from './answers.ts';
import type { CountingProxy } from './counting-proxy.ts';
import { ANTHROPIC_MODEL, OPENAI_MODEL } from './hostile-cases.ts';
import { type Closing, closingOf, withStore } from './store-checks.ts';

export interface FaultCase {
  name: string;
  wire: Wire;
  stream: boolean;
  /** The fake's directive body (test/fake-provider/script.ts). */
  directive: string;
}

export interface FaultResult {
  name: string;
  /** `<status> <code>`, `200 + error frame`, `200 (whole)`, or `n/a (…)` when the fake cannot send it. */
  got: string;
  closing: Closing;
  /** Recorded as a success although the client got no whole answer. */
  silentSuccess: boolean;
  seconds: number;
  /** Peak RSS of the gateway during the call minus its RSS before it. */
  growthMiB: number;
}

const NONE: Closing = { type: 'none', errorClass: null, costUsd: null };
const MiB = 1024 * 1024;

export interface RetryResult {
  name: string;
  sdk: 'openai' | 'anthropic';
  /** What the SDK threw (status and code), or `ok`. */
  outcome: string;
  upstreamCalls: number;
  seconds: number;
}

const BOTH = (name: string, stream: boolean, directive: string): FaultCase[] => [
  { name, wire: 'openai', stream, directive },
  { name, wire: 'anthropic', stream, directive },
];

export const FAULTS: FaultCase[] = [
  ...BOTH('200 with a non-JSON body', false, 'malformed'),
  ...BOTH('200 with the JSON string "oops"', false, 'bad-body=string'),
  ...BOTH('200 with {}', false, 'bad-body=empty'),
  ...BOTH('200 without usage', false, 'bad-body=no-usage'),
  ...BOTH('200 with fields of the wrong type', false, 'bad-body=wrong-types'),
  ...BOTH('200 of 64 MiB', false, `oversize=${64 * MiB}`),
  ...BOTH('stream frame not JSON', true, 'malformed'),
  ...BOTH('stream without its terminal frame', true, 'no-terminal'),
  ...BOTH('stream reset after 2 frames', true, 'reset-after=2'),
  ...BOTH('SSE line of 32 MiB without newline', true, `oversize=${32 * MiB}`),
];

/** Upstream failures that every attempt meets, for the retry multiplication count. */
export const ALWAYS_FAILING = [
  { name: 'upstream 500', directive: 'error=500' },
  { name: 'provider spend limit', directive: 'spend-limit' },
];

export async function runFaults(
  gw: { url: string; token: string; pid: number },
  db: string,
  cases: FaultCase[],
): Promise<FaultResult[]> {
  const out: FaultResult[] = [];
  for (const c of cases) {
    const name = `${c.name} (${c.wire}${c.stream ? ', stream' : ''})`;
    const baseline = rssMiB(gw.pid);
    let peak = baseline;
    const timer = setInterval(() => {
      peak = Math.max(peak, rssMiB(gw.pid));
    }, 100);
    const t0 = performance.now();
    const a = await send(gw.url, faultRequest(c, gw.token)).finally(() => clearInterval(timer));
    const seconds = Math.round((performance.now() - t0) / 100) / 10;
    const growthMiB = Math.round((Math.max(peak, rssMiB(gw.pid)) - baseline) * 10) / 10;
    if (a.body.includes('unknown directive')) {
      out.push({
        name,
        got: 'n/a (the fake cannot send it)',
        closing: NONE,
        silentSuccess: false,
        seconds,
        growthMiB,
      });
      continue;
    }
    const closing = a.requestId ? withStore(db, (d) => closingOf(d, a.requestId as string)) : NONE;
    out.push({
      name,
      got: describe(a.status, a.body, a.complete, c),
      closing,
      silentSuccess: closing.type === 'llm.call_completed' && closing.errorClass === null && !a.complete,
      seconds,
      growthMiB,
    });
  }
  return out;
}

/** One call per SDK (default retries) against an upstream that always fails with `directive`. */
export async function runRetryCounts(
  url: string,
  token: string,
  proxy: CountingProxy,
  directives: Array<{ name: string; directive: string }>,
): Promise<RetryResult[]> {
  const out: RetryResult[] = [];
  for (const d of directives) {
    for (const sdk of ['openai', 'anthropic'] as const) {
      const path = sdk === 'openai' ? '/v1/chat/completions' : '/v1/messages';
      const before = proxy.counts.get(path) ?? 0;
      const t0 = performance.now();
      const outcome = await sdkCall(sdk, url, token, `hi [[fake:${d.directive}]]`);
      out.push({
        name: d.name,
        sdk,
        outcome,
        upstreamCalls: (proxy.counts.get(path) ?? 0) - before,
        seconds: Math.round((performance.now() - t0) / 100) / 10,
      });
    }
  }
  return out;
}

// --- internal ---

function rssMiB(pid: number): number {
  return rssKbOf(pid) / 1024;
}

async function sdkCall(
  sdk: 'openai' | 'anthropic',
  url: string,
  token: string,
  text: string,
): Promise<string> {
  try {
    if (sdk === 'openai') {
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: token }); // default maxRetries: 2
      await client.chat.completions.create({
        model: OPENAI_MODEL,
        max_completion_tokens: 16,
        messages: [{ role: 'user', content: text }],
      });
    } else {
      const client = new Anthropic({ baseURL: url, apiKey: token });
      await client.messages.create({
        model: ANTHROPIC_MODEL,
        max_tokens: 16,
        messages: [{ role: 'user', content: text }],
      });
    }
    return 'ok';
  } catch (err) {
    const e = err as {
      status?: number;
      error?: { code?: string; error?: { code?: string } };
      message?: string;
    };
    if (e.message?.includes('unknown directive')) return 'n/a (the fake cannot send it)';
    const code = e.error?.code ?? e.error?.error?.code ?? 'no code';
    return e.status ? `${e.status} ${code}` : `error: ${e.message}`;
  }
}

function describe(status: number, body: string, complete: boolean, c: FaultCase): string {
  if (status !== 200) {
    let code = '(no code)';
    try {
      code = JSON.parse(body).error?.code ?? code;
    } catch {}
    return `${status} ${code}`;
  }
  if (complete) return '200 (whole answer)';
  if (!c.stream) return '200 (broken body)';
  const errored = c.wire === 'openai' ? /^data: \{"error"/m.test(body) : /^event: error$/m.test(body);
  return errored ? '200 + error frame' : '200 (stream cut without error frame)';
}

function faultRequest(c: FaultCase, token: string): ProbeRequest {
  const content = `hi [[fake:${c.directive}]]`;
  const stream = c.stream ? { stream: true } : {};
  if (c.wire === 'openai') {
    return {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        model: OPENAI_MODEL,
        max_completion_tokens: 16,
        messages: [{ role: 'user', content }],
        ...stream,
      }),
    };
  }
  return {
    method: 'POST',
    path: '/v1/messages',
    headers: { 'content-type': 'application/json', 'x-api-key': token, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: ANTHROPIC_MODEL,
      max_tokens: 16,
      messages: [{ role: 'user', content }],
      ...stream,
    }),
  };
}
