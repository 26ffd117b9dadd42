/**
 * The values of the fake provider's `[[fake:…]]` directive items (script.ts): numbers, switches and the
 * usage list, each refused with a DirectiveError (the fake's 400) that says what the item needs.
 */
import type { FakeUsage } from './script.ts';

/** Thrown for a directive the grammar does not know; the fake answers it with a 400. */
export class DirectiveError extends Error {
  override name = 'DirectiveError';
}

const USAGE_KEYS: Record<string, keyof FakeUsage> = {
  in: 'input',
  input: 'input',
  out: 'output',
  output: 'output',
  'cache-read': 'cacheRead',
  'cache-write': 'cacheWrite',
  'cache-write-1h': 'cacheWrite1h',
  reasoning: 'reasoning',
  cost: 'cost',
};

export function parseUsage(value: string): FakeUsage {
  const usage: FakeUsage = {};
  for (const pair of value.split(',')) {
    const [rawKey, rawNumber] = pair.split(':').map((part) => part.trim());
    const field = USAGE_KEYS[(rawKey ?? '').toLowerCase().replaceAll('_', '-')];
    const n = Number(rawNumber);
    if (field === undefined || rawNumber === undefined || rawNumber === '' || !Number.isFinite(n) || n < 0) {
      throw new DirectiveError(`fake provider: bad usage item '${pair}'`);
    }
    usage[field] = n;
  }
  return usage;
}

export function required(key: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new DirectiveError(`fake provider: '${key}' needs a value`);
  return value;
}

export function int(key: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new DirectiveError(`fake provider: '${key}' needs an integer ≥ 0`);
  return n;
}

export function bool(key: string, value: string | undefined): boolean {
  if (value === 'true' || value === undefined) return true;
  if (value === 'false') return false;
  throw new DirectiveError(`fake provider: '${key}' needs true or false`);
}
