/**
 * Reads Prometheus text exposition with a maintained parser (parse-prometheus-text-format), so metric
 * tests see families, label sets, values and histogram buckets as a Prometheus server would.
 */
import { createRequire } from 'node:module';

const parsePrometheusText: (text: string) => RawFamily[] = createRequire(import.meta.url)(
  'parse-prometheus-text-format',
);

interface RawFamily {
  name: string;
  help: string;
  type: string;
  metrics: Array<{
    labels?: Record<string, string>;
    value?: string;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }>;
}

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

export interface HistogramSample {
  labels: Record<string, string>;
  /** upper bound (`le`, +Inf as Infinity) → cumulative count, in exposition order */
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

export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  for (const raw of parsePrometheusText(text)) {
    const family: Family = {
      name: raw.name,
      help: raw.help,
      type: raw.type.toLowerCase() as Family['type'],
      samples: [],
      histograms: [],
    };
    for (const m of raw.metrics) {
      const labels = m.labels ?? {};
      if (m.buckets) {
        family.histograms.push({
          labels,
          buckets: Object.entries(m.buckets).map(([le, n]) => [parseBound(le), Number(n)]),
          count: Number(m.count),
          sum: Number(m.sum),
        });
      } else {
        family.samples.push({ labels, value: Number(m.value) });
      }
    }
    families.set(raw.name, family);
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

// --- internal ---

function parseBound(le: string): number {
  return le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
}
