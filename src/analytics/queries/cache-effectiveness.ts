/**
 * @module GET /analytics/cache_effectiveness (spec 3): per model, uncached, cache-read and cache-write
 * input tokens with hit_rate = cached / total and cache_write_share = cache_creation / total, where total
 * includes cache writes because they are billed; both ratios are null when total is zero.
 */
import { type Kysely, sql } from 'kysely';
import { engineOfKysely } from '../../store/dialect.ts';
import type { Database } from '../../store/schema.ts';
import { decodeSpend, runSpendQuery, type SpendColumns, spendSource } from '../spend.ts';
import type { TimeWindow } from '../window.ts';

export interface CacheEffectivenessRow {
  model: string | null;
  uncached_input_tokens: number;
  cached_input_tokens: number;
  cache_creation_tokens: number;
  hit_rate: number | null;
  cache_write_share: number | null;
  call_count: number;
}

/** One row per model, most input tokens first (then model id). */
export async function queryCacheEffectiveness(
  db: Kysely<Database>,
  window: TimeWindow,
): Promise<CacheEffectivenessRow[]> {
  const source = spendSource(window, sql`TRUE`, ['model'], engineOfKysely(db));
  const rows = await runSpendQuery(
    db,
    (mode) =>
      sql<
        SpendColumns & { model: string | null }
      >`SELECT model, ${source.aggregates(mode)} ${source.from} GROUP BY model`,
  );
  return rows
    .map((r) => {
      const t = decodeSpend(r);
      const total = t.inputTokens + t.cachedInputTokens + t.cacheCreationInputTokens;
      return {
        model: r.model,
        uncached_input_tokens: t.inputTokens,
        cached_input_tokens: t.cachedInputTokens,
        cache_creation_tokens: t.cacheCreationInputTokens,
        hit_rate: total === 0 ? null : t.cachedInputTokens / total,
        cache_write_share: total === 0 ? null : t.cacheCreationInputTokens / total,
        call_count: t.callCount,
      };
    })
    .sort((a, b) => totalInput(b) - totalInput(a) || String(a.model).localeCompare(String(b.model)));
}

// --- internal ---

function totalInput(r: CacheEffectivenessRow): number {
  return r.uncached_input_tokens + r.cached_input_tokens + r.cache_creation_tokens;
}
