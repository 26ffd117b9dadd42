/**
 * @module The shape of routing.yaml (spec 2 §Routing policy view): global_default, tiers, rules
 * (`name`, `when`, `use`), workspaces and the learned-routing block `pattern` (slot 4). README §Routing policy.
 */
import * as v from 'valibot';
import { FINGERPRINT_VERSIONS } from './pattern/fingerprint.ts';

/** A `when` predicate: every key present must hold (keys combine with AND). */
export interface Predicate {
  has_images?: boolean;
  has_tools?: boolean;
  /** The request's estimated input tokens are strictly above this number. */
  input_tokens_above?: number;
  /** RE2 syntax (linear time); a string, or `{pattern, ignore_case}`. */
  text_matches?: string | { pattern: string; ignore_case?: boolean };
  /** Glob or directory path matched against the request's workspace_path. */
  workspace?: string;
  /** USD spent since 00:00 UTC today is strictly above this decimal. */
  cost_today_above?: string;
  /**
   * The `model` the client sent matches one of these globs (`*` any run of characters, `?` one; case is
   * ignored). Never holds without a requested model (agent turns). Issue 13: provider-native names.
   */
  requested_model?: string | string[];
  all?: Predicate[];
  any?: Predicate[];
  not?: Predicate;
}

const USD_MESSAGE = 'must be a non-negative decimal amount of USD, such as 5 or 2.50';

const UsdSchema = v.pipe(
  v.union(
    [
      v.pipe(v.number(), v.safeInteger(USD_MESSAGE), v.minValue(0, USD_MESSAGE)),
      v.pipe(v.string(), v.regex(/^\d+(\.\d+)?$/, USD_MESSAGE)),
    ],
    USD_MESSAGE,
  ),
  v.transform((value) => String(value)),
);

const TextMatchSchema = v.union(
  [
    v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(1000, 'is longer than 1000 characters'),
    ),
    v.strictObject({
      pattern: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(1000, 'is too long')),
      ignore_case: v.optional(v.boolean('must be true or false')),
    }),
  ],
  'must be a regular expression string or {pattern, ignore_case}',
);

const WORKSPACE_MESSAGE =
  'must be an absolute path or a glob such as /srv/app or /home/*/scratch/** (~ and relative paths are not expanded)';

/** Workspaces are absolute paths: a `~/…` or relative entry could never match, so it is refused. */
const WorkspaceGlobSchema = v.pipe(
  v.string('must be a glob or path'),
  v.minLength(1, 'must not be empty'),
  v.check((p) => p.startsWith('/') || p.startsWith('*'), WORKSPACE_MESSAGE),
);

const ModelGlobSchema = v.pipe(
  v.string('must be a model name glob'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(256, 'is longer than 256 characters'),
);

export const PredicateSchema: v.GenericSchema<unknown, Predicate> = v.pipe(
  v.strictObject(
    {
      has_images: v.optional(v.boolean('must be true or false')),
      has_tools: v.optional(v.boolean('must be true or false')),
      input_tokens_above: v.optional(
        v.pipe(
          v.number('must be a whole number of tokens'),
          v.safeInteger('must be a whole number of tokens'),
          v.minValue(0, 'must not be negative'),
        ),
      ),
      text_matches: v.optional(TextMatchSchema),
      workspace: v.optional(WorkspaceGlobSchema),
      cost_today_above: v.optional(UsdSchema),
      requested_model: v.optional(
        v.union(
          [ModelGlobSchema, v.pipe(v.array(ModelGlobSchema), v.minLength(1, 'must not be empty'))],
          'must be a model name glob or a list of them',
        ),
      ),
      all: v.optional(v.pipe(v.array(v.lazy(() => PredicateSchema)), v.minLength(1, 'must not be empty'))),
      any: v.optional(v.pipe(v.array(v.lazy(() => PredicateSchema)), v.minLength(1, 'must not be empty'))),
      not: v.optional(v.lazy(() => PredicateSchema)),
    },
    'must be a predicate object such as {has_images: true}',
  ),
  v.check((p) => Object.keys(p).length > 0, 'must name at least one condition (omit `when` to always match)'),
);

const ModelRefSchema = v.pipe(
  v.string('must be a canonical model id or alias'),
  v.minLength(1, 'must not be empty'),
);

export const RuleSchema = v.strictObject({
  name: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty')),
  /** Absent: the rule always matches. */
  when: v.optional(PredicateSchema),
  use: ModelRefSchema,
});

export const WorkspaceEntrySchema = v.strictObject({
  /** A directory path (matches it and everything below) or a glob with `*`, `**`, `?`. */
  match: WorkspaceGlobSchema,
  use: ModelRefSchema,
});

/** Slot 4 (README §Learned routing); absent keys take these defaults. */
export const PATTERN_DEFAULTS = {
  enabled: false,
  fingerprint: 'structural',
  min_samples: 20,
  min_success_rate: 0.95,
  lookback_days: 14,
  candidates: [] as string[],
} as const;

const wholeNumber = (min: number, max: number, what: string) =>
  v.pipe(
    v.number(`must be a whole number ${what}`),
    v.safeInteger(`must be a whole number ${what}`),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

const RATE_MESSAGE = 'must be a number from 0 to 1, such as 0.95';

/** A share from 0 to 1; config-yaml.ts loads `0.95` as its source text, so a decimal string is read too. */
const RateSchema = v.pipe(
  v.union(
    [
      v.pipe(v.number(RATE_MESSAGE), v.minValue(0, RATE_MESSAGE), v.maxValue(1, RATE_MESSAGE)),
      v.pipe(v.string(RATE_MESSAGE), v.regex(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, RATE_MESSAGE)),
    ],
    RATE_MESSAGE,
  ),
  v.transform((value) => Number(value)),
);

export const PatternSchema = v.strictObject(
  {
    enabled: v.optional(v.boolean('must be true or false'), PATTERN_DEFAULTS.enabled),
    fingerprint: v.optional(
      v.picklist(FINGERPRINT_VERSIONS, 'must be structural or hybrid'),
      PATTERN_DEFAULTS.fingerprint,
    ),
    min_samples: v.optional(wholeNumber(1, 1_000_000, 'of requests'), PATTERN_DEFAULTS.min_samples),
    min_success_rate: v.optional(RateSchema, PATTERN_DEFAULTS.min_success_rate),
    lookback_days: v.optional(wholeNumber(1, 366, 'of days'), PATTERN_DEFAULTS.lookback_days),
    /** Models or tiers slot 4 may choose; empty means every model in models.yaml. */
    candidates: v.optional(v.array(ModelRefSchema, 'must be a list of models or tiers'), () => [
      ...PATTERN_DEFAULTS.candidates,
    ]),
  },
  'must be an object such as {enabled: true, fingerprint: hybrid}',
);

export const TiersSchema = v.strictObject({
  fast: v.optional(ModelRefSchema),
  balanced: v.optional(ModelRefSchema),
  deep: v.optional(ModelRefSchema),
});

/** Raised when routing.yaml changes incompatibly (GET /server/version, spec 2). */
export const ROUTING_POLICY_SCHEMA_VERSION = 1;

export const RoutingPolicyFileSchema = v.strictObject({
  global_default: v.optional(ModelRefSchema),
  // a section left empty (`rules:` with its entries commented out) is YAML null: read as absent
  tiers: v.nullish(TiersSchema, {}),
  rules: v.nullish(v.array(RuleSchema, 'must be a list of rules'), []),
  workspaces: v.nullish(v.array(WorkspaceEntrySchema, 'must be a list of {match, use}'), []),
  pattern: v.nullish(PatternSchema, {}),
});

export type RoutingPolicyFile = v.InferOutput<typeof RoutingPolicyFileSchema>;
export type Rule = v.InferOutput<typeof RuleSchema>;
export type WorkspaceEntry = v.InferOutput<typeof WorkspaceEntrySchema>;
export type PatternFile = v.InferOutput<typeof PatternSchema>;
