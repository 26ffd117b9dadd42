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
 * either has no `when`): what a scan of every earlier rule with predicateImplies finds, without comparing
 * a rule with the earlier ones whose model globs it cannot imply. Each pair costs microseconds, so a
 * generated policy of thousands of `requested_model` rules took minutes (8,000 rules: 80 s) at every start,
 * reload and check; this is linear for such a policy.
 */
export function firstImpliedEarlier(whens: readonly (Predicate | undefined)[]): number[] {
  // earlier rules by each glob of their top-level requested_model conjuncts, and those without one
  const byGlob = new Map<string, number[]>();
  const withoutModel: number[] = [];
  return whens.map((when, i) => {
    if (when === undefined) return -1;
    const left = conjuncts(when);
    const found = firstImplied(when, candidatesFor(left, i, byGlob, withoutModel), whens);
    const models = left.filter((atom) => atom.requested_model !== undefined);
    if (models.length === 0) withoutModel.push(i);
    for (const atom of models)
      for (const glob of new Set(globList(atom.requested_model!))) {
        const list = byGlob.get(glob);
        if (list) list.push(i);
        else byGlob.set(glob, [i]);
      }
    return found;
  });
}

// --- internal ---

/**
 * The earlier rules (before `before`) a rule whose conjuncts are `left` may imply. A requested_model conjunct
 * is implied only by one of `left`'s whose globs are all among its own (atomImplies), so among the earlier
 * rules with one only those listing the first glob of one of `left`'s can be; a disjunction in `left` is split
 * into branches (predicateImplies): every earlier rule then.
 */
function candidatesFor(
  left: readonly Predicate[],
  before: number,
  byGlob: ReadonlyMap<string, readonly number[]>,
  withoutModel: readonly number[],
): readonly number[] {
  if (left.some((atom) => atom.any !== undefined)) return Array.from({ length: before }, (_, j) => j);
  const out = new Set(withoutModel);
  for (const atom of left)
    if (atom.requested_model !== undefined)
      for (const j of byGlob.get(globList(atom.requested_model)[0]) ?? []) out.add(j);
  return [...out].sort((x, y) => x - y);
}

function firstImplied(
  when: Predicate,
  candidates: readonly number[],
  whens: readonly (Predicate | undefined)[],
): number {
  for (const j of candidates) {
    const earlier = whens[j];
    if (earlier !== undefined && predicateImplies(when, earlier)) return j;
  }
  return -1;
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
