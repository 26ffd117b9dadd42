/**
 * Sends every hostile case to a running gateway and judges each answer against the answers the spec
 * allows: status and `error.code`, the error body's shape on that path, and for a 200 a whole response.
 * Anything else (a 500, another code, a reset connection, a broken body) is an undocumented answer.
 */
import { Agent } from 'undici';
import { type Answer, send } from './answers.ts';
import type { BodyShape, HostileCase } from './hostile-cases.ts';

export type Problem = '5xx' | 'wrong status/code' | 'wrong body shape' | 'broken 200' | 'no answer';

export interface HostileResult {
  name: string;
  shape: BodyShape;
  expect: string[];
  /** `200`, `<status> <code>`, or `no answer (<socket error>)`. */
  got: string;
  problem?: Problem;
}

export async function runHostile(url: string, cases: HostileCase[]): Promise<HostileResult[]> {
  const results: HostileResult[] = [];
  for (const c of cases) {
    // one connection per case: a case that breaks its connection must not fail the next one
    const agent = new Agent({ connections: 1, pipelining: 1 });
    try {
      results.push(judge(c, await send(url, c.request, agent, 60_000)));
    } finally {
      await agent.destroy().catch(() => {});
    }
  }
  return results;
}

/** Results with a problem, counted by kind. */
export function countProblems(results: HostileResult[]): Record<Problem, number> & { total: number } {
  const counts = {
    total: 0,
    '5xx': 0,
    'wrong status/code': 0,
    'wrong body shape': 0,
    'broken 200': 0,
    'no answer': 0,
  };
  for (const r of results) {
    if (!r.problem) continue;
    counts.total++;
    counts[r.problem]++;
  }
  return counts;
}

// --- internal ---

function judge(c: HostileCase, a: Answer): HostileResult {
  const out = { name: c.name, shape: c.shape, expect: c.expect };
  if (a.status === 0) return { ...out, got: `no answer (${a.error})`, problem: 'no answer' };
  if (a.status === 200) {
    if (!c.expect.includes('200')) return { ...out, got: '200', problem: 'wrong status/code' };
    return a.complete ? { ...out, got: '200' } : { ...out, got: '200 (broken body)', problem: 'broken 200' };
  }
  const body = parse(a.body);
  const code = codeOf(body);
  const got = `${a.status} ${code ?? '(no code)'}`;
  if (!c.expect.includes(got)) return { ...out, got, problem: a.status >= 500 ? '5xx' : 'wrong status/code' };
  if (!hasShape(c.shape, body)) return { ...out, got, problem: 'wrong body shape' };
  return { ...out, got };
}

function codeOf(body: unknown): string | undefined {
  const err = (body as { error?: { code?: unknown } } | undefined)?.error;
  return typeof err?.code === 'string' ? err.code : undefined;
}

/** DECISIONS §4: `{"error":{message,type,param:null,code}}` on the chat path, `{"type":"error","error":{type,message,code}}` on the messages path. */
function hasShape(shape: BodyShape, body: unknown): boolean {
  if (shape === 'http') return true;
  const b = body as Record<string, unknown> | undefined;
  const err = b?.error as Record<string, unknown> | undefined;
  if (!err || typeof err !== 'object' || typeof err.message !== 'string' || typeof err.code !== 'string') {
    return false;
  }
  if (shape === 'openai') return typeof err.type === 'string' && err.param === null;
  if (shape === 'anthropic') return b?.type === 'error' && typeof err.type === 'string';
  return true;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
