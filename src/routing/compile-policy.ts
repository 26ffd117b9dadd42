/**
 * @module Turns routing.yaml text into a CompiledPolicy: schema check, model references resolved
 * against the registry, predicates compiled, shadowing warnings. Version = SHA-256 of the bytes.
 */
import * as v from 'valibot';
import { isSvcError } from '../lib/errors.ts';
import { sha256Hex } from '../lib/hash.ts';
import { describeIssues, markEmptyListsForMappings, parseConfigYaml } from '../models/config-yaml.ts';
import { TIERS, type Tier } from '../models/model-schema.ts';
import type { ModelRegistry } from '../models/registry.ts';
import { suggestModel } from '../models/suggest-model.ts';
import { compileWorkspaceMatcher, isCatchAll } from './glob.ts';
import { compilePatternConfig, type PatternConfig } from './pattern/config.ts';
import type { Predicate, RoutingPolicyFile } from './policy-schema.ts';
import {
  PredicateSchema,
  RoutingPolicyFileSchema,
  RuleSchema,
  WorkspaceEntrySchema,
} from './policy-schema.ts';
import { type CompiledPredicate, compilePredicate } from './when.ts';
import { firstImpliedEarlier } from './when-implies.ts';

/** DECISIONS §1: the global default unless SVC_GATEWAY_GLOBAL_DEFAULT or the policy says otherwise. */
export const BUILT_IN_GLOBAL_DEFAULT = 'anthropic:claude-sonnet-4-5';

export interface CompiledRule {
  name: string;
  test: CompiledPredicate | null;
  /** Canonical id. */
  use: string;
  /**
   * The rule's `when` is only `requested_model`: it maps the name the client sent (the built-in
   * provider-native rules), so `use` is the model the request named and is never swapped for another.
   */
  namesRequestedModel: boolean;
}

export interface CompiledWorkspace {
  match: string;
  test: (path: string) => boolean;
  use: string;
}

export interface CompiledPolicy {
  /** SHA-256 hex of the policy file bytes. */
  version: string;
  /** File path, or `built-in routing.yaml`. */
  source: string;
  file: RoutingPolicyFile;
  /** Effective slot 7 model: policy global_default > SVC_GATEWAY_GLOBAL_DEFAULT > built-in. */
  globalDefault: string;
  /** Effective tier models: the policy's tiers, else the registry's owner of that alias. */
  tiers: Record<Tier, string | null>;
  rules: CompiledRule[];
  workspaces: CompiledWorkspace[];
  /** Slot 4's settings (routing.yaml `pattern:`). */
  pattern: PatternConfig;
  /** Canonical id for a reference: tier names via `tiers`, then registry ids and aliases. */
  resolveRef(ref: string): string | undefined;
}

export interface CompileOptions {
  registry: ModelRegistry;
  /** SVC_GATEWAY_GLOBAL_DEFAULT, used when the policy has no global_default. */
  envGlobalDefault?: string;
}

export interface PolicyCheck {
  valid: boolean;
  errors: string[];
  warnings: string[];
  /** Present when valid. */
  policy?: CompiledPolicy;
}

/** Validates and compiles policy bytes; never throws for a bad policy (errors are returned). */
export function compilePolicyText(
  bytes: string | Uint8Array,
  source: string,
  opts: CompileOptions,
): PolicyCheck {
  const text = typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8');
  let doc: unknown;
  try {
    doc = parseConfigYaml(text, source, true);
  } catch (err) {
    if (!isSvcError(err)) throw err;
    return { valid: false, errors: (err.details?.errors as string[]) ?? [err.message], warnings: [] };
  }
  // no policy at all (an empty file, comments only, `~`) is refused alike: a reload that lands while the file
  // is being rewritten (`>` truncates it first) keeps the rules in force rather than dropping every one (README)
  if (doc === null || doc === undefined)
    return {
      valid: false,
      errors: [
        'holds no policy (an empty file, only comments, or ~); write {} for a policy with no rules of its own',
      ],
      warnings: [],
    };
  const input = markEmptyListsForMappings(doc, RoutingPolicyFileSchema);
  const parsed = v.safeParse(RoutingPolicyFileSchema, input);
  const version = sha256Hex(bytes);
  if (!parsed.success) {
    const errors = describeIssues(parsed.issues, RoutingPolicyFileSchema, input);
    // what the schema let through is compiled too, so one check names every mistake (an unknown model, a
    // regular expression RE2 refuses), not the schema's first and the rest after a fix
    const rest = v.safeParse(RoutingPolicyFileSchema, salvage(input, opts.registry.list()[0]?.id));
    const more: string[] = [];
    if (rest.success) compilePolicy(rest.output, { ...opts, version, source }, more, []);
    return { valid: false, errors: [...errors, ...more.filter((e) => !errors.includes(e))], warnings: [] };
  }
  const errors: string[] = [];
  const warnings: string[] = [];
  const policy = compilePolicy(parsed.output, { ...opts, version, source }, errors, warnings);
  return errors.length > 0 ? { valid: false, errors, warnings } : { valid: true, errors, warnings, policy };
}

// --- internal ---

function compilePolicy(
  file: RoutingPolicyFile,
  opts: CompileOptions & { version: string; source: string },
  errors: string[],
  warnings: string[],
): CompiledPolicy {
  const { registry } = opts;
  const tierOverrides = new Map<string, string>();
  const modelTiers = tiersByModelField(registry);
  // a tier name: the policy's `tiers`, else the owner of that alias, else the first model declaring that tier
  const lookup = (value: string): string | undefined =>
    tierOverrides.get(value) ?? registry.resolve(value)?.id ?? modelTiers.get(value);
  const ref = (value: string, path: string): string => {
    const id = lookup(value);
    if (id === undefined) {
      const guess = suggestModel(value, registry);
      errors.push(
        `${path}: unknown model ${JSON.stringify(value)} (not a canonical id or alias in ${registry.source})${guess ? `; did you mean ${guess}?` : ''}`,
      );
    }
    return id ?? value;
  };
  const tiers = {} as Record<Tier, string | null>;
  for (const tier of TIERS) {
    const given = file.tiers[tier];
    if (given !== undefined) tierOverrides.set(tier, ref(given, `tiers.${tier}`));
    tiers[tier] = lookup(tier) ?? null;
  }
  const rules = file.rules.map((r, i) => ({
    name: r.name,
    test: r.when ? compilePredicate(r.when, `rules[${i}].when`, errors) : null,
    use: ref(r.use, `rules[${i}].use`),
    namesRequestedModel: r.when !== undefined && Object.keys(r.when).join() === 'requested_model',
  }));
  const workspaces = file.workspaces.map((w, i) => ({
    match: w.match,
    test: compileWorkspaceMatcher(w.match),
    use: ref(w.use, `workspaces[${i}].use`),
  }));
  const globalDefault = resolveGlobalDefault(file, opts, ref, lookup, warnings);
  warnings.push(...shadowingWarnings(file));
  const pattern = compilePatternConfig(
    file.pattern,
    ref,
    registry.list().map((m) => m.id),
    warnings,
  );
  return {
    version: opts.version,
    source: opts.source,
    file,
    globalDefault,
    tiers,
    rules,
    workspaces,
    pattern,
    resolveRef: lookup,
  };
}

function resolveGlobalDefault(
  file: RoutingPolicyFile,
  opts: CompileOptions,
  ref: (value: string, path: string) => string,
  lookup: (value: string) => string | undefined,
  warnings: string[],
): string {
  if (file.global_default !== undefined) {
    if (opts.envGlobalDefault && opts.envGlobalDefault !== file.global_default)
      warnings.push(
        `global_default: the policy's ${file.global_default} wins over SVC_GATEWAY_GLOBAL_DEFAULT=${opts.envGlobalDefault}`,
      );
    return ref(file.global_default, 'global_default');
  }
  const fallback = opts.envGlobalDefault ?? BUILT_IN_GLOBAL_DEFAULT;
  const id = lookup(fallback);
  if (id === undefined) {
    const guess = suggestModel(fallback, opts.registry);
    // the policy has no global_default: name where the model came from, so the warning says what to change
    const named = opts.envGlobalDefault
      ? `SVC_GATEWAY_GLOBAL_DEFAULT=${fallback}`
      : `the built-in default ${fallback}`;
    warnings.push(
      `global_default: ${named} is not in ${opts.registry.source}; slot 7 will be rejected with model_not_configured${guess ? `; did you mean ${guess}?` : ''}`,
    );
  }
  return id ?? fallback;
}

/**
 * The document without the parts the schema refused: a refused rule or workspace entry becomes a neutral one at
 * its index (so later paths keep their numbers), keeping a refused rule's `use` and `when` when each is sound
 * alone; a refused section is left out. Not a mapping: an empty one.
 */
function salvage(input: unknown, neutral: string | undefined): Record<string, unknown> {
  if (input === null || typeof input !== 'object' || Array.isArray(input) || neutral === undefined) return {};
  const sections = RoutingPolicyFileSchema.entries;
  const fits = (schema: v.GenericSchema, value: unknown) => v.safeParse(schema, value).success;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (key === 'rules' && Array.isArray(value))
      out.rules = value.map((r, i) => {
        if (fits(RuleSchema, r)) return r;
        const { when, use } = (r ?? {}) as { when?: unknown; use?: unknown };
        return {
          name: `#${i}`,
          use: typeof use === 'string' && use !== '' ? use : neutral,
          ...(when !== undefined && fits(PredicateSchema, when) ? { when } : {}),
        };
      });
    else if (key === 'workspaces' && Array.isArray(value))
      out.workspaces = value.map((w) => (fits(WorkspaceEntrySchema, w) ? w : { match: '/', use: neutral }));
    else if (key in sections && fits(sections[key as keyof typeof sections], value)) out[key] = value;
  }
  return out;
}

/**
 * Tier names no alias claims, each to the first model of models.yaml (file order) whose `tier` field names it:
 * a models.yaml without the built-in table's `fast` / `balanced` / `deep` aliases still has its tiers.
 */
function tiersByModelField(registry: ModelRegistry): Map<string, string> {
  const out = new Map<string, string>();
  for (const tier of TIERS) {
    if (registry.resolveAlias(tier) !== undefined) continue;
    const first = registry.list().find((m) => m.tier === tier);
    if (first) out.set(tier, first.id);
  }
  return out;
}

/** Rules or workspace entries that can never be reached because an earlier one always matches first. */
function shadowingWarnings(file: RoutingPolicyFile): string[] {
  const out: string[] = [];
  const seen = new Map<string, number>();
  let catchAll = -1;
  const implied = firstImpliedEarlier(file.rules.map((r) => r.when));
  file.rules.forEach((r, i) => {
    if (catchAll >= 0)
      out.push(
        `rules[${i}] (${r.name}) is shadowed: rules[${catchAll}] (${file.rules[catchAll].name}) before it has no \`when\` and always matches`,
      );
    const key = whenKey(r.when);
    const same = seen.get(key);
    if (catchAll < 0 && same !== undefined)
      out.push(
        `rules[${i}] (${r.name}) is shadowed: rules[${same}] (${file.rules[same].name}) has the same \`when\``,
      );
    const wider = catchAll < 0 && same === undefined ? implied[i] : -1;
    if (wider >= 0)
      out.push(
        `rules[${i}] (${r.name}) is shadowed: rules[${wider}] (${file.rules[wider].name}) matches every request it matches`,
      );
    if (same === undefined) seen.set(key, i);
    if (r.when === undefined && catchAll < 0) catchAll = i;
  });
  const names = new Set<string>();
  file.rules.forEach((r, i) => {
    if (names.has(r.name)) out.push(`rules[${i}]: the rule name ${r.name} is used twice`);
    names.add(r.name);
  });
  const firstCatchAll = file.workspaces.findIndex((w) => isCatchAll(w.match));
  // the earlier plain directory entries by folder (the first of each), so an entry looks up its own folders
  // instead of comparing itself with every earlier entry (8,000 entries took 50 s)
  const folders = new Map<string, number>();
  file.workspaces.forEach((w, i) => {
    if (firstCatchAll >= 0 && i > firstCatchAll)
      out.push(`workspaces[${i}] (${w.match}) is shadowed: workspaces[${firstCatchAll}] matches every path`);
    else {
      const j = coveringFolder(folders, w.match);
      if (j >= 0)
        out.push(
          `workspaces[${i}] (${w.match}) is shadowed: workspaces[${j}] (${file.workspaces[j].match}) matches it and every path below it`,
        );
    }
    const folder = plainFolder(w.match);
    if (folder !== undefined && !folders.has(folder)) folders.set(folder, i);
  });
  return out;
}

/** The folder a plain directory entry matches, with every path below it; undefined for a glob or catch-all. */
function plainFolder(match: string): string | undefined {
  return /[*?]/.test(match) || isCatchAll(match) ? undefined : match.replace(/\/+$/, '');
}

/**
 * The first earlier plain directory entry (of `folders`) that matches every path `later` can match: one at
 * that path or above it, or -1.
 */
function coveringFolder(folders: ReadonlyMap<string, number>, later: string): number {
  const wildcard = later.search(/[*?]/);
  // a glob's paths all sit below the folder written before its first wildcard
  let path =
    wildcard < 0 ? later.replace(/\/+$/, '') : later.slice(0, Math.max(0, later.lastIndexOf('/', wildcard)));
  let first = -1;
  for (;;) {
    const j = folders.get(path);
    if (j !== undefined && (first < 0 || j < first)) first = j;
    const cut = path.lastIndexOf('/');
    if (cut < 0) return first;
    path = path.slice(0, cut);
  }
}

function whenKey(when: Predicate | undefined): string {
  return when === undefined ? '' : JSON.stringify(when, Object.keys(flattenKeys(when)).sort());
}

function flattenKeys(value: unknown, acc: Record<string, true> = {}): Record<string, true> {
  if (Array.isArray(value)) for (const item of value) flattenKeys(item, acc);
  else if (value && typeof value === 'object')
    for (const [k, item] of Object.entries(value)) {
      acc[k] = true;
      flattenKeys(item, acc);
    }
  return acc;
}
