/**
 * @module Compiles `when` predicates of routing.yaml into plain functions at load, so a request
 * pays no YAML, regex or glob compilation. Regexes use RE2 (re2js): matching is linear in the text.
 */
import { RE2JS } from 're2js';
import { compare, type Decimal, parseDecimal, ZERO } from '../lib/decimal.ts';
import { errorMessage } from '../lib/errors.ts';
import type { PredicateEnv, RouteContext, RouteFacts } from './facts.ts';
import { compileWorkspaceMatcher } from './glob.ts';
import { fingerprintRequest, type RequestFingerprint } from './pattern/fingerprint.ts';
import type { Predicate } from './policy-schema.ts';

export type CompiledPredicate = (env: PredicateEnv) => boolean;

/** `text_matches` sees at most this many characters from the start of the text. */
export const TEXT_MATCH_LIMIT = 32_768;

/** Compiles one predicate; problems are pushed to `errors` as `<path>: <reason>`. */
export function compilePredicate(pred: Predicate, path: string, errors: string[]): CompiledPredicate {
  const parts: CompiledPredicate[] = [];
  if (pred.has_images !== undefined) {
    const want = pred.has_images;
    parts.push((env) => env.facts.hasImages === want);
  }
  if (pred.has_tools !== undefined) {
    const want = pred.has_tools;
    parts.push((env) => env.facts.hasTools === want);
  }
  if (pred.input_tokens_above !== undefined) {
    const limit = pred.input_tokens_above;
    parts.push((env) => env.facts.estimatedInputTokens > limit);
  }
  if (pred.text_matches !== undefined)
    parts.push(compileTextMatch(pred.text_matches, `${path}.text_matches`, errors));
  if (pred.workspace !== undefined) {
    const matches = compileWorkspaceMatcher(pred.workspace);
    parts.push((env) => env.facts.workspacePath !== null && matches(env.facts.workspacePath));
  }
  if (pred.cost_today_above !== undefined) {
    const limit = parseDecimal(pred.cost_today_above);
    parts.push((env) => compare(env.costToday(), limit) > 0);
  }
  if (pred.requested_model !== undefined) {
    const matches = compileModelGlobs(pred.requested_model);
    parts.push((env) => env.facts.requestedModel !== null && matches(env.facts.requestedModel));
  }
  if (pred.all) {
    const subs = pred.all.map((p, i) => compilePredicate(p, `${path}.all[${i}]`, errors));
    parts.push((env) => subs.every((s) => s(env)));
  }
  if (pred.any) {
    const subs = pred.any.map((p, i) => compilePredicate(p, `${path}.any[${i}]`, errors));
    parts.push((env) => subs.some((s) => s(env)));
  }
  if (pred.not) {
    const sub = compilePredicate(pred.not, `${path}.not`, errors);
    parts.push((env) => !sub(env));
  }
  return parts.length === 1 ? parts[0] : (env) => parts.every((p) => p(env));
}

/** The per-request environment; text, fingerprints and today's cost are computed at most once, when asked. */
export function createPredicateEnv(facts: RouteFacts, ctx: RouteContext): PredicateEnv {
  let text: string | undefined;
  let cost: Decimal | undefined;
  let print: RequestFingerprint | undefined;
  const env: PredicateEnv = {
    facts,
    text() {
      if (text === undefined) {
        const raw = typeof facts.text === 'function' ? facts.text() : (facts.text ?? '');
        text = raw.length > TEXT_MATCH_LIMIT ? raw.slice(0, TEXT_MATCH_LIMIT) : raw;
      }
      return text;
    },
    fingerprint() {
      print ??= fingerprintRequest(facts, env.text());
      return print;
    },
    costToday() {
      if (cost === undefined) {
        const value = ctx.costTodayUsd?.() ?? ZERO;
        cost = typeof value === 'string' ? parseDecimal(value) : value;
      }
      return cost;
    },
  };
  return env;
}

/**
 * One test for a list of model-name globs: `*` any run, `?` one character, case ignored, whole name. Linear
 * per glob (no regular expression: `*a*a*a*…c` against a long name the client chose would backtrack for
 * minutes in a JS RegExp and hold every request of the process).
 */
export function compileModelGlobs(globs: string | readonly string[]): (name: string) => boolean {
  const list = (typeof globs === 'string' ? [globs] : globs).map((g) => g.toLowerCase());
  return (name) => {
    const lower = name.toLowerCase();
    return list.some((g) => globMatches(g, lower));
  };
}

// --- internal ---

function compileTextMatch(
  spec: NonNullable<Predicate['text_matches']>,
  path: string,
  errors: string[],
): CompiledPredicate {
  const pattern = typeof spec === 'string' ? spec : spec.pattern;
  const ignoreCase = typeof spec === 'string' ? false : spec.ignore_case === true;
  try {
    const re = RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
    return (env) => re.test(env.text());
  } catch (err) {
    // RE2 has no backreferences or lookaround: those are reported here, at load
    errors.push(`${path}: not a valid RE2 regular expression: ${errorMessage(err)}`);
    return () => false;
  }
}

/**
 * Whole-name wildcard match, `*` and `?`, without backtracking beyond the last `*`: when a later part fails,
 * the last `*` takes one more character. O(glob × name) at worst.
 */
function globMatches(glob: string, name: string): boolean {
  let g = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    if (g < glob.length && (glob[g] === '?' || (glob[g] !== '*' && glob[g] === name[n]))) {
      g++;
      n++;
    } else if (g < glob.length && glob[g] === '*') {
      star = g++;
      resume = n;
    } else if (star >= 0) {
      g = star + 1;
      n = ++resume;
    } else return false;
  }
  while (g < glob.length && glob[g] === '*') g++;
  return g === glob.length;
}
