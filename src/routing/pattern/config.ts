/**
 * @module routing.yaml's `pattern:` block compiled for slot 4: candidates resolved to canonical ids, and the
 * warnings POST /routing/check reports for settings that make learned routing unreliable or idle.
 */
import type { PatternFile } from '../policy-schema.ts';
import type { FingerprintVersion } from './fingerprint.ts';

export interface PatternConfig {
  enabled: boolean;
  fingerprint: FingerprintVersion;
  minSamples: number;
  minSuccessRate: number;
  lookbackDays: number;
  /** Canonical ids slot 4 may choose; null means every model in models.yaml. */
  candidates: ReadonlySet<string> | null;
  /**
   * The canonical ids of models.yaml. The trace store remembers models that have left it since (for the whole
   * lookback window): slot 4 never chooses one of those, so the cheapest registered model that worked wins.
   */
  registered: ReadonlySet<string>;
}

/** Below this many samples a success rate says little; /routing/check warns. */
export const FEW_SAMPLES = 10;

/**
 * `ref` resolves a model or tier name (reporting unknown ones as errors); `registered` lists the canonical ids
 * of models.yaml; warnings are appended.
 */
export function compilePatternConfig(
  file: PatternFile,
  ref: (value: string, path: string) => string,
  registered: readonly string[],
  warnings: string[],
): PatternConfig {
  const candidates = file.candidates.map((c, i) => ref(c, `pattern.candidates[${i}]`));
  if (file.enabled && file.min_samples < FEW_SAMPLES)
    warnings.push(
      `pattern.min_samples: ${file.min_samples} requests are too few to judge a success rate; ${FEW_SAMPLES} or more is safer`,
    );
  if (file.enabled && file.min_success_rate < 0.5)
    warnings.push(
      `pattern.min_success_rate: ${file.min_success_rate} lets slot 4 choose a model that fails most of the time`,
    );
  return {
    enabled: file.enabled,
    fingerprint: file.fingerprint,
    minSamples: file.min_samples,
    minSuccessRate: file.min_success_rate,
    lookbackDays: file.lookback_days,
    candidates: candidates.length > 0 ? new Set(candidates) : null,
    registered: new Set(registered),
  };
}
