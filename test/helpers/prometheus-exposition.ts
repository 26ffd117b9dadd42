/**
 * Reads Prometheus text exposition with a maintained parser (prom2javascript), so metric tests see
 * families, label sets, values and histogram buckets as a Prometheus server would.
 */
import { getMetricsFromIterator, type PromData, type PromHistogramData } from 'prom2javascript';

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

export interface HistogramSample {
  labels: Record<string, string>;
  /** upper bound (`le`, +Inf as Infinity) → cumulative count, ascending */
  buckets: Array<[number, number]>;
  count: number;
  sum: number;
}

export interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
  histograms: HistogramSample[];
}

export async function parseExposition(text: string): Promise<Map<string, Family>> {
  const parsed = await getMetricsFromIterator(text.split('\n')[Symbol.iterator]());
  const families = new Map<string, Family>();
  for (const [name, raw] of Object.entries(parsed)) {
    const family: Family = {
      name,
      help: raw.help,
      type: raw.type as Family['type'],
      samples: [],
      histograms: [],
    };
    if (raw.type === 'histogram') {
      for (const h of raw.data as PromHistogramData[]) {
        family.histograms.push({
          labels: h.labels,
          buckets: Object.entries(h.buckets)
            .map(([le, n]): [number, number] => [parseBound(le), n])
            .sort((a, b) => a[0] - b[0]),
          count: h.count,
          sum: h.sum ?? Number.NaN,
        });
      }
    } else {
      for (const d of raw.data as PromData[]) family.samples.push({ labels: d.labels, value: d.value });
    }
    families.set(name, family);
  }
  return families;
}

/** The label sets of a family's series, as sorted canonical strings (`a=x,b=y`). */
export function labelSets(family: Family): string[] {
  const series = family.type === 'histogram' ? family.histograms : family.samples;
  return series.map((s) => canonicalLabels(s.labels)).sort();
}

/** The value of the series whose label set is exactly `labels`; undefined when there is none. */
export function sampleOf(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const key = canonicalLabels(labels);
  return families.get(name)?.samples.find((s) => canonicalLabels(s.labels) === key)?.value;
}

/** The histogram series whose label set is exactly `labels`. */
export function histogramOf(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): HistogramSample | undefined {
  const key = canonicalLabels(labels);
  return families.get(name)?.histograms.find((s) => canonicalLabels(s.labels) === key);
}

export function canonicalLabels(labels: Record<string, string>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
}

/** Every sample as `name{a=x,b=y}` → value; histograms as their _bucket (with le), _count and _sum series. */
export function flattenSeries(families: Map<string, Family>): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of families.values()) {
    for (const s of f.samples) out.set(`${f.name}{${canonicalLabels(s.labels)}}`, s.value);
    for (const h of f.histograms) {
      for (const [le, n] of h.buckets) {
        const bound = le === Number.POSITIVE_INFINITY ? '+Inf' : String(le);
        out.set(`${f.name}_bucket{${canonicalLabels({ ...h.labels, le: bound })}}`, n);
      }
      out.set(`${f.name}_count{${canonicalLabels(h.labels)}}`, h.count);
      out.set(`${f.name}_sum{${canonicalLabels(h.labels)}}`, h.sum);
    }
  }
  return out;
}

/** Series whose value differs between two scrapes (a new series counts from 0), as series → delta. */
export function changedSeries(before: Map<string, Family>, after: Map<string, Family>): Map<string, number> {
  const a = flattenSeries(before);
  const b = flattenSeries(after);
  const out = new Map<string, number>();
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    const delta = (b.get(key) ?? 0) - (a.get(key) ?? 0);
    if (delta !== 0) out.set(key, delta);
  }
  return out;
}

/** Scrapes `<baseUrl>/metrics` (asserting 200); `movedBy` runs an action and returns the series it changed. */
export function createScraper(baseUrl: string) {
  const scrape = async (): Promise<Map<string, Family>> => {
    const res = await fetch(`${baseUrl}/metrics`);
    if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
    return parseExposition(await res.text());
  };
  const movedBy = async (action: () => Promise<void>): Promise<Map<string, number>> => {
    const before = await scrape();
    await action();
    return changedSeries(before, await scrape());
  };
  return { scrape, movedBy };
}

// --- internal ---

function parseBound(le: string): number {
  return le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
}
