/**
 * @module "Did you mean …?" for a model reference that the registry does not know (routing.yaml `use`,
 * `tiers`, `global_default`, `pattern.candidates`): a bare provider name gets its canonical id
 * (`gpt-5` → `openai:gpt-5`), a name off by case or a couple of letters the id or alias it is closest to.
 */
import type { ModelRegistry } from './registry.ts';

/** The reference `ref` most likely means, or undefined when nothing is close. */
export function suggestModel(ref: string, registry: ModelRegistry): string | undefined {
  const wanted = ref.toLowerCase();
  const names: string[] = [];
  for (const entry of registry.list()) {
    const bare = entry.id.slice(entry.id.indexOf(':') + 1);
    if (bare.toLowerCase() === wanted) return entry.id;
    names.push(entry.id, ...entry.aliases);
  }
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(wanted, name.toLowerCase(), MAX_DISTANCE);
    if (distance <= MAX_DISTANCE && (best === undefined || distance < best.distance))
      best = { name, distance };
  }
  return best?.name;
}

// --- internal ---

/** Typos worth suggesting for: a letter or two missing, extra, swapped or wrong. */
const MAX_DISTANCE = 2;

/** Levenshtein distance, or `limit + 1` as soon as it must exceed `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      rowMin = Math.min(rowMin, current[j]);
    }
    if (rowMin > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length];
}
