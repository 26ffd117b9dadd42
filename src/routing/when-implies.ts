/**
 * @module Predicate implication for shadowing warnings (POST /routing/check): `a` implies `b` when every
 * request matching `a` also matches `b`, so a rule with `a` after a rule with `b` can never win. Sound,
 * not complete: answers false when it cannot tell (regexes and globs are compared only for equality).
 */
import { compare, parseDecimal } from '../lib/decimal.ts';
import type { Predicate } from './policy-schema.ts';

export function predicateImplies(a: Predicate, b: Predicate): boolean {
  const left = conjuncts(a);
  // a disjunction on the left implies b when each of its branches (with the rest of a) does
  const anyIndex = left.findIndex((atom) => atom.any !== undefined);
  if (anyIndex >= 0) {
    const rest = left.filter((_, i) => i !== anyIndex);
    const branches = left[anyIndex].any ?? [];
    return branches.every((branch) => predicateImplies({ all: [...rest, branch] }, b));
  }
  return conjuncts(b).every((goal) => left.some((have) => atomImplies(have, goal)) || anyGoalHolds(a, goal));
}

/**
 * For each of `whens` (a policy's rules in order), the first earlier one it implies (-1 when none, or when
 * either has no `when`): what a scan of every earlier rule with predicateImplies finds, without comparing a
 * rule with earlier ones it cannot imply. Each pair costs microseconds, so a generated policy of thousands of
 * rules took minutes (8,000 `requested_model` rules: 80 s) at every start, reload and check. Each earlier
 * rule is filed under one of its conjuncts that only an atom with the same key and value can imply (see
 * bucketsOf); a rule looks in the buckets of its own atoms, and at the rules filed under none (thresholds and
 * disjunctions alone). A rule with a disjunction on its left is split into branches (predicateImplies), so it
 * is compared with every earlier rule.
 */
export function firstImpliedEarlier(whens: readonly (Predicate | undefined)[]): number[] {
  const filed = new Map<string, number[]>();
  const unfiled: number[] = [];
  const all: number[] = [];
  return whens.map((when, i) => {
    if (when === undefined) return -1;
    const left = conjuncts(when);
    let found = -1;
    const look = (list: readonly number[] | undefined) => {
      for (const j of list ?? []) {
        if (found >= 0 && j >= found) return; // each list is in rule order: only an earlier one can be first
        if (predicateImplies(when, whens[j]!)) found = j;
      }
    };
    if (left.some((atom) => atom.any !== undefined)) look(all);
    else {
      look(unfiled);
      for (const atom of left) for (const key of lookupKeys(atom)) look(filed.get(key));
    }
    all.push(i);
    const keys = fileUnder(left);
    if (keys.length === 0) unfiled.push(i);
    for (const key of keys) {
      const list = filed.get(key);
      if (list) list.push(i);
      else filed.set(key, [i]);
    }
    return found;
  });
}

// --- internal ---

/**
 * The keys a rule is filed under: those of one of its conjuncts that atomImplies grants only to an atom
 * with the same key and value (a requested_model conjunct: to one whose globs are all among its own, so
 * under each of its globs, and an implying atom is looked up by its first). The most selective kind is
 * chosen; thresholds and disjunctions cannot be filed.
 */
function fileUnder(conjunctList: readonly Predicate[]): string[] {
  for (const kind of FILING_ORDER) {
    const atom = conjunctList.find((c) => c[kind] !== undefined);
    if (atom)
      return kind === 'requested_model'
        ? [...new Set(globList(atom.requested_model!).map(modelKey))]
        : lookupKeys(atom);
  }
  return [];
}

const FILING_ORDER = [
  'requested_model',
  'text_matches',
  'workspace',
  'not',
  'has_images',
  'has_tools',
] as const;

const modelKey = (glob: string) => `requested_model ${glob}`;

/** The filing keys under which the rules this one-key atom may imply (through that conjunct) are found. */
function lookupKeys(atom: Predicate): string[] {
  if (atom.requested_model !== undefined) return [modelKey(globList(atom.requested_model)[0])];
  if (atom.text_matches !== undefined) {
    const t = atom.text_matches;
    const [pattern, ignoreCase] = typeof t === 'string' ? [t, false] : [t.pattern, !!t.ignore_case];
    return [`text_matches ${ignoreCase} ${pattern}`];
  }
  if (atom.workspace !== undefined) return [`workspace ${atom.workspace}`];
  if (atom.not !== undefined) return [`not ${canonical(atom.not)}`];
  if (atom.has_images !== undefined) return [`has_images ${atom.has_images}`];
  if (atom.has_tools !== undefined) return [`has_tools ${atom.has_tools}`];
  return [];
}

/** conjuncts of the predicates being compared, each flattened once however many pairs it takes part in */
const conjunctsOf = new WeakMap<Predicate, Predicate[]>();

/** `p` as a list of one-key predicates, `all` flattened. */
function conjuncts(p: Predicate): Predicate[] {
  const known = conjunctsOf.get(p);
  if (known) return known;
  const out: Predicate[] = [];
  for (const [key, value] of Object.entries(p) as Array<[keyof Predicate, unknown]>) {
    if (value === undefined) continue;
    if (key === 'all') for (const q of value as Predicate[]) out.push(...conjuncts(q));
    else out.push({ [key]: value } as Predicate);
  }
  conjunctsOf.set(p, out);
  return out;
}

/** `goal` is `{any: [...]}` and `a` implies one of its branches. */
function anyGoalHolds(a: Predicate, goal: Predicate): boolean {
  return goal.any?.some((branch) => predicateImplies(a, branch)) ?? false;
}

/** One-key `have` implies one-key `goal`. */
function atomImplies(have: Predicate, goal: Predicate): boolean {
  if (have.has_images !== undefined) return goal.has_images === have.has_images;
  if (have.has_tools !== undefined) return goal.has_tools === have.has_tools;
  if (have.input_tokens_above !== undefined)
    return goal.input_tokens_above !== undefined && have.input_tokens_above >= goal.input_tokens_above;
  if (have.cost_today_above !== undefined)
    return (
      goal.cost_today_above !== undefined &&
      compare(parseDecimal(String(have.cost_today_above)), parseDecimal(String(goal.cost_today_above))) >= 0
    );
  if (have.text_matches !== undefined)
    return goal.text_matches !== undefined && sameText(have.text_matches, goal.text_matches);
  if (have.workspace !== undefined) return goal.workspace === have.workspace;
  if (have.requested_model !== undefined) {
    // every glob of `have` is also one of `goal`'s (equality only: globs are not compared by language)
    if (goal.requested_model === undefined) return false;
    const wider = new Set(globList(goal.requested_model));
    return globList(have.requested_model).every((g) => wider.has(g.toLowerCase()));
  }
  if (have.not !== undefined) return goal.not !== undefined && canonical(have.not) === canonical(goal.not);
  return false;
}

function sameText(
  a: NonNullable<Predicate['text_matches']>,
  b: NonNullable<Predicate['text_matches']>,
): boolean {
  const norm = (t: typeof a) =>
    typeof t === 'string'
      ? { pattern: t, ignore_case: false }
      : { pattern: t.pattern, ignore_case: !!t.ignore_case };
  const x = norm(a);
  const y = norm(b);
  return x.pattern === y.pattern && x.ignore_case === y.ignore_case;
}

/** JSON with sorted keys, so two equal predicates compare equal whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

function globList(globs: string | readonly string[]): string[] {
  return (typeof globs === 'string' ? [globs] : [...globs]).map((g) => g.toLowerCase());
}
