/**
 * `svc routing explain --model <m> --text "<prompt>" [--tools a,b] [--images]`: the routing chain as it would
 * run now for such a request (routing.yaml, models.yaml, provider keys and the pattern table learned from
 * the trace store), with its fingerprint and why slot 4 matched or not. Reads only.
 */
import { existsSync } from 'node:fs';
import { defineCommand } from 'citty';
import { readEnv } from '../../../config/env.ts';
import { DEFAULT_DB_PATH_HELP, resolveStoreTarget, type StoreTarget } from '../../../config/paths.ts';
import { SvcError } from '../../../lib/errors.ts';
import { silentLogger } from '../../../lib/log.ts';
import { systemClock } from '../../../lib/time.ts';
import { adapterConfigs, lastKnownGoodPath } from '../../../llm/load-call-config.ts';
import { loadModelRegistry } from '../../../models/registry.ts';
import type { CompiledPolicy } from '../../../routing/compile-policy.ts';
import { DEFAULT_POLICY_SOURCE } from '../../../routing/default-policy.ts';
import { loadRoutingPolicy } from '../../../routing/load-policy.ts';
import { describeExplainRequest, explainRoute } from '../../../routing/pattern/explain.ts';
import { DAY_US } from '../../../routing/pattern/router.ts';
import { queryPatternStats } from '../../../routing/pattern/stats-query.ts';
import { queryPatternStatsPostgres } from '../../../routing/pattern/stats-query-postgres.ts';
import { buildPatternTable, emptyPatternTable, type PatternTable } from '../../../routing/pattern/table.ts';
import { openStore } from '../../../store/open.ts';
import { runLongStatements } from '../../../store/statement-bounds.ts';
import { configFileFlagsOf } from '../../config-flags.ts';
import { databaseUrlArg, storeFlagsOf } from '../../store-flags.ts';

export default defineCommand({
  meta: {
    name: 'explain',
    description: 'Show the routing chain, fingerprint and pattern verdict for a request',
  },
  args: {
    model: {
      type: 'string',
      required: true,
      description: 'The request `model` (e.g. auto, fast, openai:gpt-5)',
    },
    text: { type: 'string', required: true, description: 'The last user message' },
    tools: { type: 'string', description: 'Comma-separated tool names the request offers' },
    images: { type: 'boolean', description: 'The request carries an image' },
    workspace: { type: 'string', description: "The key's or session's workspace path" },
    messages: { type: 'string', description: 'Messages in the conversation (default 1)' },
    'input-tokens': {
      type: 'string',
      description: 'Estimated input tokens (default: the routing estimate of the text and tools)',
    },
    'max-tokens': {
      type: 'string',
      description:
        "The request's max_tokens, counted in the context check as the gateway counts it (default none)",
    },
    'cost-today': {
      type: 'string',
      description: 'USD the key (or agent server) spent since 00:00 UTC, for cost_today_above (default 0)',
    },
    routing: {
      type: 'string',
      description: 'routing.yaml (default SVC_ROUTING_POLICY or the built-in policy)',
    },
    models: { type: 'string', description: 'models.yaml (default SVC_MODELS or the built-in registry)' },
    'db-path': {
      type: 'string',
      description: `Trace store path (default SVC_DB_PATH or ${DEFAULT_DB_PATH_HELP})`,
    },
    ...databaseUrlArg,
  },
  async run({ args }) {
    const env = readEnv();
    const flags = configFileFlagsOf(args);
    const registry = loadModelRegistry(flags.modelsPath ?? env.models);
    const routingPath = flags.routingPath ?? env.routingPolicy;
    // the policy a server would route with now: an invalid file falls back on its last known good copy
    const policyStore = loadRoutingPolicy({
      path: routingPath,
      registry,
      envGlobalDefault: env.gatewayGlobalDefault,
      lastKnownGoodPath: routingPath ? lastKnownGoodPath(env, routingPath) : undefined,
      readOnly: true,
      log: silentLogger,
    });
    const view = policyStore.view();
    const policy = policyStore.current();
    const target = resolveStoreTarget(env, storeFlagsOf(args));
    const { table, source } = await readTable(target, policy);
    const model = modelFlag(args.model);
    const costToday = usdFlag(args['cost-today'], '--cost-today');
    const facts = describeExplainRequest({
      model,
      text: args.text,
      tools: toolsFlag(args.tools),
      images: args.images === true,
      workspace: args.workspace === undefined ? null : workspaceFlag(args.workspace),
      // a request has at least one message: the gateway refuses one without (400 naming messages)
      messages: wholeNumber(args.messages, '--messages', 1),
      inputTokens: wholeNumber(args['input-tokens'], '--input-tokens'),
      maxTokens: wholeNumber(args['max-tokens'], '--max-tokens', 1),
    });
    const available = Object.keys(adapterConfigs(env));
    const { lines } = explainRoute({
      facts,
      ctx: {
        policy,
        registry,
        availableAdapters: new Set(available),
        costTodayUsd: () => costToday,
      },
      table,
      tableSource: source,
    });
    lines.splice(1, 0, providersLine(available));
    const fallback =
      view.source === DEFAULT_POLICY_SOURCE ? 'the built-in policy' : 'its last known good copy';
    if (!view.valid)
      lines.unshift(
        `policy       ${routingPath} is invalid (${view.errors.join('; ')}); shown with ${fallback}`,
      );
    else lines.unshift(...view.warnings.map((w) => `policy       ${view.source}: ${w}`));
    process.stdout.write(`${lines.join('\n')}\n`);
    // explain is how a file is checked before it ships (README): a script (CI) sees an invalid one fail
    if (!view.valid)
      throw new SvcError('config_invalid', {
        message: `${routingPath} is invalid (${view.errors.join('; ')}); a server would route with ${fallback} instead: fix the file before you ship it.`,
      });
  },
});

// --- internal ---

/** The table a server would build now; every (key, model) is kept so explain can say why each is out. */
async function readTable(
  target: StoreTarget,
  policy: CompiledPolicy,
): Promise<{ table: PatternTable; source: string }> {
  const cfg = policy.pattern;
  if (target.engine === 'sqlite' && !existsSync(target.path))
    return { table: emptyPatternTable(cfg.fingerprint), source: `no trace store at ${target.path}` };
  // the target, not its path: SVC_SQLITE_BUSY_TIMEOUT_MS bounds the wait for a writer's lock here too;
  // a PostgreSQL database without svc's tables is refused, as the reports refuse it
  const store = await openStore(target, { readOnly: true, currentSchema: true });
  try {
    const nowUs = systemClock.nowUs();
    const params = { sinceUs: nowUs - cfg.lookbackDays * DAY_US, version: cfg.fingerprint, minSamples: 1 };
    const rows =
      store.engine === 'sqlite'
        ? queryPatternStats(store.db, params)
        : await runLongStatements(() => queryPatternStatsPostgres(store.kysely, params));
    return {
      table: buildPatternTable(rows, cfg, nowUs),
      source: `${target.engine === 'sqlite' ? target.path : store.path}, last ${cfg.lookbackDays} days`,
    };
  } finally {
    await store.close();
  }
}

/** A blank --workspace names no folder (an unset shell variable): a usage error, as on issue-key. */
function workspaceFlag(text: string): string {
  if (text.trim() === '')
    throw new SvcError('usage_error', {
      message:
        "--workspace must not be empty: give the key's or session's workspace folder, or leave it out.",
    });
  return text;
}

/**
 * The providers explain takes as keyed: those of this shell, which a server's environment may not share, so
 * the line says which (with none, every model reads provider_unavailable).
 */
function providersLine(available: readonly string[]): string {
  if (available.length > 0) return `providers    ${available.join(', ')} (the *_API_KEY variables set here)`;
  return 'providers    none: ANTHROPIC_API_KEY, OPENAI_API_KEY and OPENROUTER_API_KEY are unset here, so every model is provider_unavailable (a server refuses to start without one)';
}

/** Comma-separated tool names; an empty one (`--tools ,,`, `--tools=`, `a,,b`) names no tool: a usage error. */
function toolsFlag(text: string | undefined): string[] {
  if (text === undefined) return [];
  const names = text.split(',').map((t) => t.trim());
  if (names.includes(''))
    throw new SvcError('usage_error', {
      message: `--tools "${text}" holds an empty tool name: give comma-separated names such as read_file,bash, or leave --tools out for a request without tools.`,
    });
  return names;
}

/** A blank --model names no model: the gateway answers such a request 400, so there is nothing to explain. */
function modelFlag(text: string): string {
  if (text.trim() === '')
    throw new SvcError('usage_error', {
      message: '--model must not be empty: give the model a request names, such as auto or fast.',
    });
  return text;
}

/** An amount of USD as routing.yaml writes one (`25`, `2.50`); absent is 0. */
function usdFlag(text: string | undefined, flag: string): string {
  if (text === undefined) return '0';
  if (!/^\d+(\.\d+)?$/.test(text))
    throw new SvcError('usage_error', {
      message: `${flag} must be a non-negative amount of USD such as 25 or 2.50, not "${text}".`,
    });
  return text;
}

/** A count flag: digits only, and no larger than a number holds exactly (above 2^53 it printed rounded). */
/** A count flag: a whole number from `min` up to 2^53 − 1, else a usage error naming the flag. */
function wholeNumber(text: string | undefined, flag: string, min = 0): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)) || Number(text) < min)
    throw new SvcError('usage_error', {
      message: `${flag} must be a whole number ${min > 0 ? `from ${min} ` : ''}up to ${Number.MAX_SAFE_INTEGER}, not "${text}".`,
    });
  return Number(text);
}
