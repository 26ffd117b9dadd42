/**
 * @module The learned table slot 4 reads: per fingerprint key, the models seen and the one to choose (the
 * lowest median cost among the candidates still in models.yaml with at least min_samples requests and a success
 * rate of at least min_success_rate). Built off the request path from stats-query.ts rows; a lookup is one Map
 * read per key.
 */
import { add, compare, div, formatDecimal, parseDecimal } from '../../lib/decimal.ts';
import type { PatternConfig } from './config.ts';
import type { FingerprintVersion, RequestFingerprint } from './fingerprint.ts';

/** One (key, model) aggregate over the lookback window, as stats-query.ts returns it. */
export interface PatternStatRow {
  key: string;
  model: string;
  samples: number;
  successes: number;
  /** The lower and upper middle cost of the successful samples (decimal strings); null without any. */
  median_low: string | null;
  median_high: string | null;
}

export interface ModelStat {
  model: string;
  samples: number;
  successes: number;
  successRate: number;
  /** Median cost of the successful samples; null when none succeeded. */
  medianCostUsd: string | null;
}

export interface PatternEntry {
  /** Every model seen for this key, candidates or not (`svc routing explain` shows why each is out). */
  models: ModelStat[];
  /** The model slot 4 chooses for this key, or null when none qualifies. */
  best: ModelStat | null;
}

/** What slot 4 proposes, and what pattern.matched reports. */
export interface PatternMatch {
  model: string;
  /** The table key that matched. */
  fingerprint: string;
  fingerprint_version: FingerprintVersion;
  samples: number;
  success_rate: number;
  median_cost_usd: string;
}

export interface PatternTable {
  version: FingerprintVersion;
  /** When the rows were read (epoch µs); 0 for the empty table of a server that has not built one yet. */
  builtAtUs: number;
  /** By table key (patternKeys). */
  entries: ReadonlyMap<string, PatternEntry>;
  /** The same entries by structural fingerprint, then sketch band ('' for structural): no key is built per lookup. */
  byStructural: ReadonlyMap<string, ReadonlyMap<string, PatternEntry>>;
}

export function emptyPatternTable(version: FingerprintVersion = 'structural'): PatternTable {
  return { version, builtAtUs: 0, entries: new Map(), byStructural: new Map() };
}

export function buildPatternTable(
  rows: readonly PatternStatRow[],
  config: PatternConfig,
  builtAtUs: number,
): PatternTable {
  const entries = new Map<string, PatternEntry>();
  const byStructural = new Map<string, Map<string, PatternEntry>>();
  for (const row of rows) {
    let entry = entries.get(row.key);
    if (!entry) {
      entry = { models: [], best: null };
      entries.set(row.key, entry);
      const slash = row.key.indexOf('/');
      const structural = slash < 0 ? row.key : row.key.slice(0, slash);
      let bands = byStructural.get(structural);
      if (!bands) {
        bands = new Map();
        byStructural.set(structural, bands);
      }
      bands.set(slash < 0 ? '' : row.key.slice(slash + 1), entry);
    }
    const stat = toModelStat(row);
    entry.models.push(stat);
    if (qualifies(stat, config) && (entry.best === null || isBetter(stat, entry.best))) entry.best = stat;
  }
  return { version: config.fingerprint, builtAtUs, entries, byStructural };
}

/** The hot path: the best-evidenced qualifying entry among the request's keys (1 structural, 16 hybrid). */
export function lookupPattern(table: PatternTable, print: RequestFingerprint): PatternMatch | null {
  const bands = table.byStructural.get(print.structural);
  if (!bands) return null;
  let band = '';
  let best = table.version === 'structural' ? (bands.get('')?.best ?? null) : null;
  if (table.version === 'hybrid')
    for (const b of print.sketch) {
      const candidate = bands.get(b)?.best;
      if (candidate && (best === null || candidate.samples > best.samples)) {
        best = candidate;
        band = b;
      }
    }
  if (!best) return null;
  return {
    model: best.model,
    fingerprint: band ? `${print.structural}/${band}` : print.structural,
    fingerprint_version: table.version,
    samples: best.samples,
    success_rate: best.successRate,
    median_cost_usd: best.medianCostUsd!,
  };
}

/** Why a model is or is not chosen for a key (`svc routing explain`). */
export function describeModelStat(stat: ModelStat, config: PatternConfig): string {
  const rate = `${(stat.successRate * 100).toFixed(1)} % success over ${requests(stat.samples)}`;
  const cost = stat.medianCostUsd === null ? 'no successful request' : `median $${stat.medianCostUsd}`;
  const why: string[] = [];
  if (!config.registered.has(stat.model)) why.push('not in models.yaml');
  else if (config.candidates && !config.candidates.has(stat.model)) why.push('not a candidate');
  if (stat.samples < config.minSamples) why.push(`below min_samples ${config.minSamples}`);
  if (stat.successRate < config.minSuccessRate) why.push(`below min_success_rate ${config.minSuccessRate}`);
  return `${stat.model}: ${rate}, ${cost}${why.length ? ` (${why.join(', ')})` : ''}`;
}

/** A count of requests as a sentence says it: `1 request`, `25 requests`. */
export function requests(n: number): string {
  return `${n} request${n === 1 ? '' : 's'}`;
}

// --- internal ---

function toModelStat(row: PatternStatRow): ModelStat {
  let median: string | null = null;
  if (row.median_low !== null && row.median_high !== null) {
    const sum = add(parseDecimal(row.median_low), parseDecimal(row.median_high));
    median = formatDecimal(div(sum, parseDecimal(2), sum.scale + 1)); // exact: one more digit suffices
  }
  return {
    model: row.model,
    samples: row.samples,
    successes: row.successes,
    successRate: row.samples > 0 ? row.successes / row.samples : 0,
    medianCostUsd: median,
  };
}

function qualifies(stat: ModelStat, config: PatternConfig): boolean {
  return (
    stat.medianCostUsd !== null &&
    stat.samples >= config.minSamples &&
    stat.successRate >= config.minSuccessRate &&
    config.registered.has(stat.model) &&
    (config.candidates === null || config.candidates.has(stat.model))
  );
}

/** Lower median cost wins; then the higher success rate, then more samples, then the model id. */
function isBetter(a: ModelStat, b: ModelStat): boolean {
  const byCost = compare(parseDecimal(a.medianCostUsd!), parseDecimal(b.medianCostUsd!));
  if (byCost !== 0) return byCost < 0;
  if (a.successRate !== b.successRate) return a.successRate > b.successRate;
  if (a.samples !== b.samples) return a.samples > b.samples;
  return a.model < b.model;
}
