/**
 * @module `svc routing explain`: the routing chain as it would run now for a described request, with its
 * fingerprint, what slot 4 learned for it and why slot 4 matched or not. Reads; never publishes.
 */
import { resolve } from 'node:path';
import type { ContentBlock } from '../../canonical/message.ts';
import { type Decimal, formatDecimal } from '../../lib/decimal.ts';
import { resolveRequestedRef } from '../candidate.ts';
import { type RouteDecision, resolveRoute } from '../chain.ts';
import type { RouteContext, RouteFacts } from '../facts.ts';
import { describeRequest } from '../request-facts.ts';
import { patternKeys, structuralParts } from './fingerprint.ts';
import { describeModelStat, lookupPattern, type PatternTable, requests } from './table.ts';

export interface ExplainInput {
  facts: RouteFacts;
  /** Policy, registry, adapters and allowed models as the server would use them (hooks are set here). */
  ctx: Omit<RouteContext, 'hooks'>;
  table: PatternTable;
  /** Where the table came from, e.g. the store path, or why it is empty. */
  tableSource: string;
}

/** What `svc routing explain` is told about a request (its flags). */
export interface ExplainRequest {
  model: string;
  text: string;
  tools: string[];
  images: boolean;
  workspace: string | null;
  /** Messages in the conversation (default 1: just this one). */
  messages?: number;
  /** Overrides the estimate (the flags cannot carry a real request's system prompt or tool schemas). */
  inputTokens?: number;
  /** The output the request asks for (max_tokens): the context check counts it, as on the gateway. */
  maxTokens?: number;
}

/**
 * RouteFacts of a one-message request with these tools (empty schemas) and, optionally, an image. The
 * workspace is resolved as issue-key and POST /sessions store it (`/srv/app/` is `/srv/app`; a relative path
 * is read against the current folder), so it hashes into the fingerprint the server saw.
 */
export function describeExplainRequest(r: ExplainRequest): RouteFacts {
  const content: ContentBlock[] = [{ type: 'text', text: r.text }];
  if (r.images)
    content.push({ type: 'image', source: { type: 'url', url: 'https://example.invalid/image.png' } });
  const facts = describeRequest(
    {
      model: r.model,
      system: [],
      messages: [{ role: 'user', content }],
      tools: r.tools.map((name) => ({
        type: 'function',
        name,
        input_schema: { type: 'object', properties: {} },
      })),
      stream: false,
      include_usage: false,
      ...(r.maxTokens === undefined ? {} : { max_tokens: r.maxTokens }),
    },
    { workspacePath: r.workspace === null ? null : resolve(r.workspace) },
  );
  if (r.messages !== undefined) facts.messageCount = r.messages;
  if (r.inputTokens !== undefined) facts.estimatedInputTokens = r.inputTokens;
  return facts;
}

export interface Explained {
  decision: RouteDecision;
  lines: string[];
}

export function explainRoute(input: ExplainInput): Explained {
  const { facts, table } = input;
  const hooks = {
    pattern: (_f: RouteFacts, print: Parameters<typeof lookupPattern>[1]) => lookupPattern(table, print),
  };
  const ctx: RouteContext = { ...input.ctx, hooks };
  const decision = resolveRoute(facts, ctx);
  const cfg = ctx.policy.pattern;
  const parts = structuralParts(facts);
  const print = decision.fingerprint;
  const lines = [
    `request      model=${facts.requestedModel ?? '(none)'} images=${yesNo(facts.hasImages)} tools=${list(parts.tools)} workspace=${parts.workspace ?? '(none)'} cost_today=$${usd(ctx.costTodayUsd?.() ?? '0')} input_tokens≈${facts.estimatedInputTokens} messages=${facts.messageCount ?? 0}${facts.maxOutputTokens ? ` max_tokens=${facts.maxOutputTokens}` : ''}`,
    `structural   ${print.structural}  (workspace=${parts.workspace ?? '(none)'}, images=${yesNo(parts.images)}, tools=${list(parts.tools)}, input_tokens≤${parts.input_tokens_bucket}, messages≤${parts.messages_bucket})`,
    `hybrid       ${print.sketch.length} bands: ${print.sketch.join(' ')}`,
    `pattern      ${cfg.enabled ? 'enabled' : 'disabled'} in ${ctx.policy.source}; fingerprint ${cfg.fingerprint}, min_samples ${cfg.minSamples}, min_success_rate ${cfg.minSuccessRate}, lookback_days ${cfg.lookbackDays}, candidates ${cfg.candidates ? list([...cfg.candidates]) : 'every model'}`,
    `table        ${table.entries.size} key${table.entries.size === 1 ? '' : 's'} (${input.tableSource})`,
    ...slotFourLines(input, ctx, decision),
    'chain',
    ...decision.chain.map((e, i) =>
      `  ${i + 1} ${e.policy.padEnd(21)} ${e.verdict.padEnd(9)} ${e.model ?? ''}${e.policy === 'rule' && decision.rule ? ` (rule ${decision.rule})` : ''}${e.validation_failure ? ` (${e.validation_failure})` : ''}`.trimEnd(),
    ),
    decision.chosen
      ? `winner       ${decision.chain[decision.winner_index].policy} → ${decision.chosen.id}`
      : `winner       none: ${decision.error?.code} (${decision.error?.message})`,
  ];
  return { decision, lines };
}

// --- internal ---

/** Why slot 4 matched or not, in the order pattern.ts checks, then what the table holds for the keys. */
function slotFourLines(input: ExplainInput, ctx: RouteContext, d: RouteDecision): string[] {
  const { facts, table } = input;
  const cfg = ctx.policy.pattern;
  const entry = d.chain[3];
  const keys = patternKeys(d.fingerprint, cfg.fingerprint);
  const known = keys.map((k) => ({ key: k, entry: table.entries.get(k) })).filter((k) => k.entry);
  const evidence = known.flatMap(({ key, entry: e }) => [
    `             ${key}`,
    ...e!.models.map(
      (m) => `               ${describeModelStat(m, cfg)}${e!.best === m ? '  ← chosen' : ''}`,
    ),
  ]);
  const say = (why: string) => [`slot 4       ${why}`, ...evidence];
  if (!entry)
    return say(`not asked: slot ${d.winner_index + 1} (${d.chain[d.winner_index]?.policy}) won first`);
  if (entry.verdict === 'accepted') {
    const m = d.pattern!;
    return say(
      `matched ${m.fingerprint} → ${m.model} (${requests(m.samples)}, ${(m.success_rate * 100).toFixed(1)} % success, median $${m.median_cost_usd})`,
    );
  }
  if (entry.verdict === 'rejected')
    return say(
      `the learned model ${entry.model} was rejected (${entry.validation_failure}); the chain went on`,
    );
  if (!cfg.enabled) return say(`no_match: pattern.enabled is false`);
  if (facts.requestedModel !== null && resolveRequestedRef(facts.requestedModel, ctx) !== null)
    return say(
      `no_match: the request names ${facts.requestedModel}, a canonical id or alias; slot 4 never overrides it`,
    );
  if (table.version !== cfg.fingerprint)
    return say(`no_match: the table was built for ${table.version} fingerprints`);
  if (known.length === 0)
    return say(
      `no_match: nothing learned for this fingerprint (${keys.length} key${keys.length > 1 ? 's' : ''} looked up)`,
    );
  return say(
    'no_match: no model seen for this fingerprint passes min_samples, min_success_rate and candidates',
  );
}

/** Today's spend as given (`25`, `2.50`), or a decimal's own digits. */
function usd(value: Decimal | string): string {
  return typeof value === 'string' ? value : formatDecimal(value);
}

function yesNo(b: boolean): string {
  return b ? 'yes' : 'no';
}

function list(items: readonly string[]): string {
  return items.length ? items.join(',') : '(none)';
}
