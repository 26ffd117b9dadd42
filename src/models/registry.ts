/**
 * @module The model registry (models.yaml): lookup by canonical id or alias, the price table and its
 * pricing_version. Built-in defaults apply unless `--models` / `SVC_MODELS` names a file.
 */
import * as v from 'valibot';
import { formatDecimal, mul, parseDecimal } from '../lib/decimal.ts';
import { errorMessage, SvcError } from '../lib/errors.ts';
import { readRegularFile } from '../lib/regular-file.ts';
import { configInvalid, describeIssues, parseConfigYaml } from './config-yaml.ts';
import { DEFAULT_MODELS_SOURCE, DEFAULT_MODELS_YAML } from './default-models.ts';
import {
  type AdapterName,
  CANONICAL_ID_RE,
  type LongContext,
  type ModelEntry,
  type ModelPrices,
  type ModelsFile,
  ModelsFileSchema,
} from './model-schema.ts';

export interface PriceTable {
  pricing_version: string;
  /** Canonical id → prices (USD per million tokens), null for an unpriced model. */
  models: Record<string, ModelPrices | null>;
}

export interface ModelRegistry {
  readonly pricingVersion: string;
  /** File path, or `built-in models.yaml`. */
  readonly source: string;
  /** Entries in file order. */
  list(): readonly ModelEntry[];
  /** Entry by canonical id. */
  get(id: string): ModelEntry | undefined;
  /** Entry by alias (`fast`, `sonnet`, …); canonical ids do not match here. */
  resolveAlias(alias: string): ModelEntry | undefined;
  /** Entry by canonical id or alias; a bare provider model name never matches. */
  resolve(ref: string): ModelEntry | undefined;
  priceTable(): PriceTable;
}

/** Reads and validates models.yaml; without a path the built-in table. Throws SvcError config_invalid. */
export function loadModelRegistry(path: string | undefined): ModelRegistry {
  if (path === undefined) return checkedRegistry(builtinFile(), DEFAULT_MODELS_SOURCE);
  let text: string;
  try {
    text = readRegularFile(path).toString('utf8');
  } catch (err) {
    throw new SvcError('config_invalid', {
      message: `Cannot read the model registry ${path} (${errorMessage(err)}); point --models or SVC_MODELS at a readable models.yaml, or set neither to use the built-in table.`,
      details: { file: path },
      cause: err,
    });
  }
  return parseModelRegistry(text, path);
}

/** Validates models.yaml text; `source` names the file in error messages. */
export function parseModelRegistry(text: string, source: string): ModelRegistry {
  const doc = parseConfigYaml(text, source);
  const input = doc ?? {};
  const parsed = v.safeParse(ModelsFileSchema, input);
  if (!parsed.success) throw configInvalid(source, describeIssues(parsed.issues, ModelsFileSchema, input));
  return checkedRegistry(parsed.output, source);
}

/** Builds the in-memory registry from an already validated file. */
export function createModelRegistry(file: ModelsFile, source: string): ModelRegistry {
  const entries = file.models.map(toEntry);
  const byId = new Map(entries.map((e) => [e.id, e]));
  const byAlias = new Map<string, ModelEntry>();
  for (const e of entries) for (const a of e.aliases) byAlias.set(a, e);
  const table: PriceTable = {
    pricing_version: file.pricing_version,
    models: Object.fromEntries(entries.map((e) => [e.id, e.prices])),
  };
  return {
    pricingVersion: file.pricing_version,
    source,
    list: () => entries,
    get: (id) => byId.get(id),
    resolveAlias: (alias) => byAlias.get(alias),
    resolve: (ref) => byId.get(ref) ?? byAlias.get(ref),
    priceTable: () => table,
  };
}

/** Splits a canonical id at its first colon; undefined when the prefix is not an adapter. */
export function splitCanonicalId(id: string): { adapter: AdapterName; modelName: string } | undefined {
  const m = CANONICAL_ID_RE.exec(id);
  return m ? { adapter: m[1] as AdapterName, modelName: m[2] } : undefined;
}

// --- internal ---

const TWO = parseDecimal('2');
/** USD per 1,000 web searches: Anthropic's and OpenAI's list price for their server-side web search. */
const WEB_SEARCH_LIST_PRICE = '10';

type FileModel = ModelsFile['models'][number];
type FilePrices = Pick<
  NonNullable<FileModel['prices']>,
  'input' | 'output' | 'cache_read' | 'cache_write' | 'cache_write_1h'
>;

function toEntry(m: FileModel): ModelEntry {
  const { adapter, modelName } = splitCanonicalId(m.id)!;
  const web_search = m.prices?.web_search ?? (adapter === 'openrouter' ? '0' : WEB_SEARCH_LIST_PRICE);
  const prices = m.prices ? withDefaults(m.prices, web_search) : null;
  const long = m.long_context;
  const long_context: LongContext | null = long
    ? {
        max_context_tokens: long.max_context_tokens ?? m.capabilities.max_context_tokens,
        beta: long.beta ?? null,
        above_input_tokens: long.above_input_tokens ?? m.capabilities.max_context_tokens,
        // the long rates of a priced model; a model without them keeps its standard prices above the threshold
        prices: prices && long.prices ? withDefaults(long.prices, web_search) : null,
      }
    : null;
  // a tier's prices count only beside standard ones: an unpriced model stays unpriced at every tier
  const tiers = prices && m.service_tiers ? Object.entries(m.service_tiers) : [];
  const service_tiers = Object.fromEntries(
    tiers.flatMap(([tier, p]) => (p ? [[tier, withDefaults(p, web_search)]] : [])),
  );
  return {
    id: m.id,
    adapter,
    tier: m.tier,
    can_delegate: m.can_delegate,
    aliases: m.aliases,
    capabilities: m.capabilities,
    model_name: modelName,
    prices,
    long_context,
    service_tiers: Object.keys(service_tiers).length > 0 ? service_tiers : null,
  };
}

function withDefaults(p: FilePrices, web_search: string): ModelPrices {
  return {
    input: p.input,
    output: p.output,
    cache_read: p.cache_read ?? p.input,
    cache_write: p.cache_write ?? p.input,
    cache_write_1h: p.cache_write_1h ?? formatDecimal(mul(parseDecimal(p.input), TWO), 0),
    web_search,
  };
}

/** Rules valibot cannot express: unique ids and aliases, adapter = id prefix, aliases ≠ bare names. */
function crossCheck(file: ModelsFile): string[] {
  const errors: string[] = [];
  const ids = new Map<string, number>();
  // The built-in table's names count too: a file without openai:gpt-5 still may not claim `gpt-5`.
  const bareNames = new Set([...modelNames(file), ...builtinModelNames()]);
  const aliases = new Map<string, string>();
  file.models.forEach((m, i) => {
    const { adapter } = splitCanonicalId(m.id)!;
    const seen = ids.get(m.id);
    if (seen !== undefined) errors.push(`models[${i}].id: duplicate of models[${seen}].id (${m.id})`);
    else ids.set(m.id, i);
    if (m.adapter !== undefined && m.adapter !== adapter)
      errors.push(`models[${i}].adapter: ${m.adapter} does not match the id prefix ${adapter}`);
    errors.push(...longContextErrors(m, i, adapter));
    m.aliases.forEach((alias, j) => {
      const where = `models[${i}].aliases[${j}]`;
      const owner = aliases.get(alias);
      if (owner !== undefined) errors.push(`${where}: alias ${alias} is already used by ${owner}`);
      else aliases.set(alias, m.id);
      // spec 1 §Model identifiers: a bare provider model name must not win slot 1
      if (bareNames.has(alias)) errors.push(`${where}: alias ${alias} equals a bare provider model name`);
    });
  });
  return errors;
}

/**
 * A long-context window is Anthropic's (its beta header reaches only an anthropic upstream) and is larger; a
 * price step without a beta states its threshold, inside the model's window, and its prices.
 */
function longContextErrors(m: FileModel, i: number, adapter: AdapterName): string[] {
  const long = m.long_context;
  if (!long) return [];
  const where = `models[${i}].long_context`;
  const errors: string[] = [];
  const standard = m.capabilities.max_context_tokens;
  if (long.beta === undefined) {
    if (long.max_context_tokens !== undefined)
      errors.push(
        `${where}.max_context_tokens: only with beta (a step without one applies inside capabilities.max_context_tokens)`,
      );
    if (long.above_input_tokens === undefined)
      errors.push(`${where}.above_input_tokens: required without beta (the input size the prices step at)`);
    else if (long.above_input_tokens >= standard)
      errors.push(`${where}.above_input_tokens: must be below capabilities.max_context_tokens (${standard})`);
    if (!long.prices)
      errors.push(`${where}.prices: required without beta (the prices above above_input_tokens)`);
  } else {
    if (adapter !== 'anthropic')
      errors.push(`${where}: only an anthropic model takes a beta (it is an anthropic-beta header)`);
    if (long.max_context_tokens === undefined)
      errors.push(`${where}.max_context_tokens: required with beta (the window the beta opens)`);
    else if (long.max_context_tokens <= standard)
      errors.push(`${where}.max_context_tokens: must be above capabilities.max_context_tokens (${standard})`);
    if (
      long.above_input_tokens !== undefined &&
      long.max_context_tokens !== undefined &&
      long.above_input_tokens >= long.max_context_tokens
    )
      errors.push(`${where}.above_input_tokens: must be below long_context.max_context_tokens`);
  }
  if (long.prices && !m.prices) errors.push(`${where}.prices: the model has no prices to go with them`);
  return errors;
}

function modelNames(file: ModelsFile): string[] {
  return file.models.map((m) => splitCanonicalId(m.id)!.modelName);
}

/** A validated file after the rules valibot cannot express; `source` names it in error messages. */
function checkedRegistry(file: ModelsFile, source: string): ModelRegistry {
  const errors = crossCheck(file);
  if (errors.length > 0) throw configInvalid(source, errors);
  return createModelRegistry(file, source);
}

let builtin: ModelsFile | undefined;
/**
 * The built-in table, read and validated once a process: every report, routing explain and server start
 * uses it, and the cross-check of any models.yaml reads its names (its YAML alone is ~10 ms of CPU).
 */
function builtinFile(): ModelsFile {
  builtin ??= v.parse(ModelsFileSchema, parseConfigYaml(DEFAULT_MODELS_YAML, DEFAULT_MODELS_SOURCE));
  return builtin;
}

let builtinNames: readonly string[] | undefined;
/** The bare model names of the built-in table (without its cross-check). */
function builtinModelNames(): readonly string[] {
  builtinNames ??= modelNames(builtinFile());
  return builtinNames;
}
