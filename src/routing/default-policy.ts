/**
 * @module The built-in routing.yaml: the hardcoded defaults of spec 2 §What the service does, item 5, plus
 * slot-3 rules that send provider-native model names (what Claude Code, Codex and the SDKs' examples send:
 * `claude-opus-4-8`, `claude-haiku-4-5-20251001`, `gpt-5-codex`, `gpt-4o`) to the registry model they name
 * or its nearest sibling (issue 13). A rule whose model the registry lacks is left out (its names fall through
 * to the next rule), except a Claude family's last rule, which takes the registry's first model of that family
 * (opus, sonnet, haiku, fable), so the built-in
 * policy stays valid with any models.yaml; the global default comes from SVC_GATEWAY_GLOBAL_DEFAULT or the
 * built-in id.
 */
import { type ModelRegistry, splitCanonicalId } from '../models/registry.ts';
import { compileModelGlobs } from './when.ts';

export const DEFAULT_POLICY_SOURCE = 'built-in routing.yaml';

/** A native-name rule: the globs of `requested_model` and the canonical id they route to. */
export interface NativeNameRule {
  name: string;
  models: readonly string[];
  use: string;
  /**
   * When the registry lacks `use`: the first model of the registry (file order) of `use`'s adapter whose name
   * one of these globs matches, so a models.yaml with other Claude models of that family still gets its names.
   * Set on a family's last rule only: its narrower rules are left out and their names fall through to it.
   */
  family?: readonly string[];
}

const OPUS = ['claude-opus-*', 'claude-3-opus*'];
const SONNET = ['claude-sonnet-*', 'claude-3-7-sonnet*', 'claude-3-5-sonnet*', 'claude-3-sonnet*'];
const HAIKU = ['claude-haiku-*', 'claude-3-5-haiku*', 'claude-3-haiku*'];
const FABLE = ['claude-fable-*'];

/**
 * First match wins, so narrower names come first. Dated forms (`-20251001`, `-2025-08-07`) and `-latest`
 * ride on the trailing `*`. Names of models the built-in registry does not carry go to the nearest one of
 * the same family and tier (a newer opus or sonnet to the newest one, Claude Opus / Sonnet 5.5; a newer GPT, o-series and Codex names to
 * GPT-5, their minis to GPT-5 mini).
 */
export const NATIVE_NAME_RULES: readonly NativeNameRule[] = [
  { name: 'native-claude-fable-5-1', models: ['claude-fable-5-1*'], use: 'anthropic:claude-fable-5-1' },
  { name: 'native-claude-fable', models: FABLE, use: 'anthropic:claude-fable-5-1', family: FABLE },
  { name: 'native-claude-opus-5-5', models: ['claude-opus-5-5*'], use: 'anthropic:claude-opus-5-5' },
  { name: 'native-claude-opus-4-5', models: ['claude-opus-4-5*'], use: 'anthropic:claude-opus-4-5' },
  {
    name: 'native-claude-opus-4-1',
    models: ['claude-opus-4-1*', 'claude-opus-4', 'claude-opus-4-0', 'claude-opus-4-2025*', 'claude-3-opus*'],
    use: 'anthropic:claude-opus-4-1',
  },
  // newer opus names the registry does not hold (claude-opus-5, -4-8) go to the newest opus
  { name: 'native-claude-opus', models: OPUS, use: 'anthropic:claude-opus-5-5', family: OPUS },
  { name: 'native-claude-sonnet-5-5', models: ['claude-sonnet-5-5*'], use: 'anthropic:claude-sonnet-5-5' },
  { name: 'native-claude-sonnet-4-5', models: ['claude-sonnet-4-5*'], use: 'anthropic:claude-sonnet-4-5' },
  {
    name: 'native-claude-sonnet-4',
    models: ['claude-sonnet-4', 'claude-sonnet-4-0', 'claude-sonnet-4-2025*'],
    use: 'anthropic:claude-sonnet-4',
  },
  // claude-sonnet-5, -4-6 and the retired 3.x names go to the newest sonnet
  { name: 'native-claude-sonnet', models: SONNET, use: 'anthropic:claude-sonnet-5-5', family: SONNET },
  { name: 'native-claude-haiku-5-5', models: ['claude-haiku-5-5*'], use: 'anthropic:claude-haiku-5-5' },
  // other haiku names (bodies written for older Haikus) stay on Haiku 4.5: Haiku 5.5 refuses several of their
  // request forms with a 400 (its migration guide lists five)
  { name: 'native-claude-haiku', models: HAIKU, use: 'anthropic:claude-haiku-4-5', family: HAIKU },
  { name: 'native-gpt-6.2-sol', models: ['gpt-6.2-sol*'], use: 'openai:gpt-6.2-sol' },
  { name: 'native-gpt-4.1-mini', models: ['gpt-4.1-mini*', 'gpt-4.1-nano*'], use: 'openai:gpt-4.1-mini' },
  { name: 'native-gpt-4.1', models: ['gpt-4.1*'], use: 'openai:gpt-4.1' },
  { name: 'native-gpt-4o-mini', models: ['gpt-4o-mini*'], use: 'openai:gpt-4o-mini' },
  { name: 'native-gpt-4o', models: ['gpt-4o*', 'chatgpt-4o*'], use: 'openai:gpt-4o' },
  {
    name: 'native-gpt-mini',
    models: ['gpt-*mini*', 'codex-mini*', 'o4-mini*', 'o3-mini*', 'o1-mini*'],
    use: 'openai:gpt-5-mini',
  },
  { name: 'native-gpt-nano', models: ['gpt-*nano*'], use: 'openai:gpt-5-nano' },
  // gpt-5, gpt-5-codex, gpt-5.1-codex-max and newer (gpt-6.1-sol, Codex 0.169's default), o-series
  { name: 'native-gpt', models: ['gpt-*', 'o3*', 'o1*', 'codex-*'], use: 'openai:gpt-5' },
];

/** The built-in policy with every native-name rule (its text for the built-in registry). */
export const DEFAULT_POLICY_YAML = renderDefaultPolicy(NATIVE_NAME_RULES);

/**
 * The built-in policy for `registry`: native-name rules whose model it lacks are left out, and a model of
 * the registry that a rule would send elsewhere by its own bare name (an `openai:o3` or `openai:gpt-4.1-nano`
 * of your models.yaml, which `o3*` / `gpt-4.1-nano*` send to a sibling) gets an exact-name rule first.
 */
export function defaultPolicyYaml(registry: ModelRegistry): string {
  const kept = NATIVE_NAME_RULES.flatMap((r) => {
    const use = registry.resolve(r.use) !== undefined ? r.use : familyModel(registry, r);
    return use === undefined ? [] : [{ ...r, use }];
  });
  return renderDefaultPolicy([...exactNameRules(registry, kept), ...kept]);
}

// --- internal ---

/** The registry's first model (file order) of the rule's family and adapter, for a rule whose model it lacks. */
function familyModel(registry: ModelRegistry, rule: NativeNameRule): string | undefined {
  if (!rule.family) return undefined;
  const adapter = splitCanonicalId(rule.use)?.adapter;
  const inFamily = compileModelGlobs(rule.family);
  return registry.list().find((m) => m.adapter === adapter && inFamily(m.model_name))?.id;
}

/** Rules for the registry's own native models whose bare name the first matching `kept` rule misroutes. */
function exactNameRules(registry: ModelRegistry, kept: readonly NativeNameRule[]): NativeNameRule[] {
  const matchers = kept.map((r) => ({ use: r.use, test: compileModelGlobs(r.models) }));
  const out: NativeNameRule[] = [];
  for (const model of registry.list()) {
    if (model.adapter !== 'anthropic' && model.adapter !== 'openai') continue;
    const name = splitCanonicalId(model.id)?.modelName;
    if (!name || /[*?]/.test(name)) continue; // a glob character would match other names too
    const first = matchers.find((m) => m.test(name));
    if (first && first.use !== model.id) out.push({ name: `native-${name}`, models: [name], use: model.id });
  }
  return out;
}

/**
 * The policy's text. A glob an earlier rule already lists is left out of a later one (`claude-3-opus*` of the
 * opus family rule, first listed by `native-claude-opus-4-1`): first match wins, so it could never win there,
 * and each name is listed once; the family rule keeps it when that earlier rule is left out.
 */
function renderDefaultPolicy(rules: readonly NativeNameRule[]): string {
  const listed = new Set<string>();
  const lines = rules.flatMap((r) => {
    const models = r.models.filter((m) => !listed.has(m));
    for (const m of models) listed.add(m);
    return models.length === 0
      ? []
      : [
          `  - { name: ${r.name}, when: { requested_model: [${models.map((m) => JSON.stringify(m)).join(', ')}] }, use: ${JSON.stringify(r.use)} }`,
        ];
  });
  return `# svc built-in routing policy
# provider-native model names (claude-*, gpt-*, o-series) go to the registry model they name (slot 3)
rules:${lines.length === 0 ? ' []' : `\n${lines.join('\n')}`}
workspaces: []
pattern:
  enabled: false
`;
}
