/**
 * @module One call's attempts billed together: a failed attempt that stated its usage (a 200 body or a
 * stream's first event holding an error, a body lost on the way) and the attempt that then answered. The
 * provider bills each attempt, so every count is the sum, and so is the cost it stated itself (OpenRouter
 * `usage.cost`, upstream_cost_usd), in exact decimals.
 */
import type { CanonicalUsage } from '../canonical/response.ts';
import { add, formatDecimal, parseDecimal } from '../lib/decimal.ts';

/** Two usages of one call together (attempts billed apart); estimated when either is. */
export function addUsage(a: CanonicalUsage | undefined, b: CanonicalUsage): CanonicalUsage {
  if (a === undefined) return b;
  const sum: CanonicalUsage = {
    ...b,
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cached_input_tokens: a.cached_input_tokens + b.cached_input_tokens,
    cache_creation_input_tokens: a.cache_creation_input_tokens + b.cache_creation_input_tokens,
  };
  // counts only some attempts state: present when any did
  for (const key of ['cache_creation_1h_input_tokens', 'web_search_requests', 'reasoning_tokens'] as const) {
    if (a[key] !== undefined || b[key] !== undefined) sum[key] = (a[key] ?? 0) + (b[key] ?? 0);
  }
  if (a.upstream_cost !== undefined)
    sum.upstream_cost =
      b.upstream_cost === undefined
        ? a.upstream_cost
        : formatDecimal(add(parseDecimal(a.upstream_cost), parseDecimal(b.upstream_cost)), 0);
  if (a.estimated) sum.estimated = true;
  return sum;
}
