import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRetryAfterMs as parseRetryAfter } from '#src/adapters/upstream-error.ts';
import { createRetryBudget, DEFAULT_RETRY_POLICY, resolveRetryDelay } from '#src/llm/retry.ts';

test('a provider hint is honoured up to 30 seconds and refused above', () => {
  assert.equal(resolveRetryDelay(DEFAULT_RETRY_POLICY, 1, 1500), 1500);
  assert.equal(resolveRetryDelay(DEFAULT_RETRY_POLICY, 1, 30_000), 30_000);
  assert.equal(resolveRetryDelay(DEFAULT_RETRY_POLICY, 1, 30_001), undefined);
});

test('no more than maxRetries retries', () => {
  assert.notEqual(resolveRetryDelay(DEFAULT_RETRY_POLICY, 2, undefined), undefined);
  assert.equal(resolveRetryDelay(DEFAULT_RETRY_POLICY, 3, undefined), undefined);
  assert.equal(resolveRetryDelay({ ...DEFAULT_RETRY_POLICY, maxRetries: 0 }, 1, 10), undefined);
});

test('backoff grows exponentially with jitter inside [ceiling/2, ceiling]', () => {
  const p = DEFAULT_RETRY_POLICY;
  assert.equal(
    resolveRetryDelay(p, 1, undefined, () => 0),
    p.baseDelayMs / 2,
  );
  assert.equal(
    resolveRetryDelay(p, 1, undefined, () => 1),
    p.baseDelayMs,
  );
  assert.equal(
    resolveRetryDelay(p, 2, undefined, () => 1),
    p.baseDelayMs * 2,
  );
});

test('retry-after-ms wins over retry-after; seconds and HTTP dates are understood', () => {
  const h = (m: Record<string, string>) => (n: string) => m[n];
  assert.equal(parseRetryAfter(h({ 'retry-after-ms': '250', 'retry-after': '9' })), 250);
  assert.equal(parseRetryAfter(h({ 'retry-after': '2' })), 2000);
  assert.equal(
    parseRetryAfter(h({ 'retry-after': 'Sun, 22 Nov 2026 12:00:05 GMT' }), Date.UTC(2026, 10, 22, 12)),
    5000,
  );
  assert.equal(parseRetryAfter(h({ 'retry-after': 'soon' })), undefined);
  assert.equal(parseRetryAfter(h({})), undefined);
});

test('the retry budget caps retries at 20 % of requests above a floor, per 10 s window', () => {
  let now = 0;
  const budget = createRetryBudget({ ratio: 0.2, minPerWindow: 5, nowMs: () => now });
  let granted = 0;
  for (let i = 0; i < 100; i++) if (budget.tryAcquire()) granted++;
  assert.equal(granted, 5);
  for (let i = 0; i < 100; i++) budget.recordRequest();
  granted = 0;
  for (let i = 0; i < 100; i++) if (budget.tryAcquire()) granted++;
  assert.equal(granted, 15);
  now += 11_000; // the window slides past everything
  granted = 0;
  for (let i = 0; i < 100; i++) if (budget.tryAcquire()) granted++;
  assert.equal(granted, 5);
});
