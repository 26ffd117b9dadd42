/**
 * @module Retry policy of upstream calls (DECISIONS §4): up to N retries on 429, 5xx, 529, connection
 * errors and timeouts before the first byte; provider hints (`retry-after-ms`, `retry-after`) honoured up
 * to 30 s, otherwise exponential backoff with full jitter; and a global retry budget so a failing
 * provider is not hammered (retries may add at most 20 % on top of the request rate, with a floor).
 */

export interface RetryPolicy {
  readonly maxRetries: number;
  /** A provider hint above this is not waited for: the error goes back to the client. */
  readonly maxHintMs: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 2,
  maxHintMs: 30_000,
  baseDelayMs: 200,
  maxDelayMs: 8_000,
};

/**
 * Delay before retry number `retry` (1-based), or undefined when no retry should happen.
 * `hintMs` is the provider's retry-after hint, when it sent one.
 */
export function resolveRetryDelay(
  policy: RetryPolicy,
  retry: number,
  hintMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  if (retry > policy.maxRetries) return undefined;
  if (hintMs !== undefined) return hintMs > policy.maxHintMs ? undefined : Math.max(0, hintMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * The `retry-after` hint for a client after the gateway gave up on a retryable failure without a provider
 * hint: the backoff ceiling its own next retry would have used (so the client waits at least as long).
 */
export function resolveClientRetryHint(policy: RetryPolicy, attempts: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempts - 1));
}

export interface RetryBudget {
  /** Counts one first attempt. */
  recordRequest(): void;
  /** Takes one retry from the budget; false when the budget is spent. */
  tryAcquire(): boolean;
}

/**
 * Sliding 10-second window: retries allowed while retries < max(minPerWindow, ratio × requests).
 */
export function createRetryBudget(
  options: { ratio?: number; minPerWindow?: number; windowSeconds?: number; nowMs?: () => number } = {},
): RetryBudget {
  const ratio = options.ratio ?? 0.2;
  const minPerWindow = options.minPerWindow ?? 20;
  const slots = options.windowSeconds ?? 10;
  const now = options.nowMs ?? Date.now;
  const requests = new Array<number>(slots).fill(0);
  const retries = new Array<number>(slots).fill(0);
  let current = Math.floor(now() / 1000);

  const advance = () => {
    const second = Math.floor(now() / 1000);
    const steps = Math.min(slots, second - current);
    for (let i = 1; i <= steps; i++) {
      const idx = (current + i) % slots;
      requests[idx] = 0;
      retries[idx] = 0;
    }
    if (second > current) current = second;
    return current % slots;
  };
  const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);

  return {
    recordRequest() {
      requests[advance()] += 1;
    },
    tryAcquire() {
      const idx = advance();
      if (sum(retries) >= Math.max(minPerWindow, ratio * sum(requests))) return false;
      retries[idx] += 1;
      return true;
    },
  };
}
