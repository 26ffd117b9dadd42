/**
 * The Anthropic Messages API's refusals of a request body that the fake provider repeats (400
 * invalid_request_error, wire-formats §1.4-1.6), so a gateway's translated body the real API would refuse
 * is refused here too, and a prompt over the model's context window.
 */

import { billedInputTokens } from './billing.ts';

type Obj = Record<string, unknown>;

/**
 * The API's 400s that bite translators (wire-formats §1.4–1.6), so a gateway's translated body the real API
 * would refuse is refused here too: empty text blocks, `tool_use` / `tool_result` pairing between adjacent
 * turns, `tool_use.id` and tool name patterns, a tool name used twice (a client tool named like a server
 * tool), a forced tool that is not among tools, thinking budgets (and thinking turned off on Opus 5.5 and
 * Fable 5.1), forced tool use (on Opus 5.5, Sonnet 5.5 and Fable 5.1), thinking with a forced tool choice or with
 * sampling it does not take, and a tool loop's assistant turn that lost its leading thinking block.
 */
export function translatorRefusal(body: Obj): string | undefined {
  const unfit = modelRefusal(body) ?? webSearchToolRefusal(body);
  if (unfit) return unfit;
  const messages = body.messages as { role?: string; content?: unknown }[];
  const blocks = (content: unknown): Obj[] =>
    typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
  if (typeof body.system === 'string' ? false : blocks(body.system).some((b) => b.text === ''))
    return 'system: text content blocks must be non-empty';
  for (const [i, m] of messages.entries()) {
    const content = blocks(m.content);
    if (content.some((b) => b.type === 'text' && b.text === ''))
      return `messages.${i}: text content blocks must be non-empty`;
    const uses = content.filter((b) => b.type === 'tool_use');
    for (const u of uses)
      if (typeof u.id !== 'string' || !/^[a-zA-Z0-9_-]+$/.test(u.id))
        return `messages.${i}.content: tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
    const next = i + 1 < messages.length ? blocks(messages[i + 1].content) : undefined;
    const answered = new Set(next?.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
    const unanswered = next === undefined ? [] : uses.filter((u) => !answered.has(u.id));
    if (m.role === 'assistant' && unanswered.length > 0)
      return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.map((u) => u.id).join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    const previous = new Set(
      i > 0
        ? blocks(messages[i - 1].content)
            .filter((b) => b.type === 'tool_use')
            .map((b) => b.id)
        : [],
    );
    const orphan = content.find((b) => b.type === 'tool_result' && !previous.has(b.tool_use_id));
    if (orphan)
      return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(orphan.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
  }
  const tools = Array.isArray(body.tools) ? (body.tools as Obj[]) : [];
  for (const [i, t] of tools.entries())
    if (t.type === undefined && (typeof t.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(t.name)))
      return `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`;
  // a client tool and a server tool (web_search) share one namespace
  const names = tools.map((t) => t.name);
  if (new Set(names).size < names.length) return 'tools: Tool names must be unique.';
  // a forced tool must be one of tools, a server tool (web_search) as well as a client's
  const forced = (body.tool_choice ?? {}) as { type?: string; name?: unknown };
  if (forced.type === 'tool' && !tools.some((t) => t.name === forced.name))
    return `tool_choice: Tool '${String(forced.name)}' not found in tools`;
  const thinking = (body.thinking ?? {}) as { type?: string; budget_tokens?: number };
  if (thinking.type !== 'enabled' && thinking.type !== 'adaptive') return undefined;
  if (thinking.type === 'enabled') {
    // a budget under 1,024 is thinkingRefusal's (modelRefusal above)
    if (Number(thinking.budget_tokens) >= Number(body.max_tokens))
      return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
  }
  const choice = (body.tool_choice ?? {}) as { type?: string };
  if (choice.type === 'any' || choice.type === 'tool')
    return 'Thinking may not be enabled when `tool_choice` forces tool use.';
  if (body.temperature !== undefined && body.temperature !== 1)
    return '`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
  if (body.top_k !== undefined) return '`top_k` must be unset when thinking is enabled.';
  if (typeof body.top_p === 'number' && body.top_p < 0.95)
    return '`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled.';
  // the tool loop in progress: the last assistant turn, answered by tool results, starts with thinking
  const last = messages.findLastIndex((m) => m.role === 'assistant');
  const lastBlocks = last >= 0 ? blocks(messages[last].content) : [];
  const answeredLoop =
    last >= 0 &&
    last === messages.length - 2 &&
    lastBlocks.some((b) => b.type === 'tool_use') &&
    blocks(messages[last + 1].content).some((b) => b.type === 'tool_result');
  const head = lastBlocks[0]?.type;
  if (answeredLoop && head !== 'thinking' && head !== 'redacted_thinking')
    return `messages.${last}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(head)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`;
  return undefined;
}

/** Output limits of the Claude models of the built-in registry (the API refuses a max_tokens above). */
const MAX_OUTPUT: ReadonlyArray<[RegExp, number]> = [
  [/^claude-(opus-5-5|sonnet-5-5|fable-5-1|haiku-5-5)(-\d{8})?$/, 128_000],
  [/^claude-(opus|sonnet|haiku)-4-5(-\d{8})?$/, 64_000],
  [/^claude-opus-4-1(-\d{8})?$/, 32_000],
];

/**
 * What a Claude model before 4.6 refuses of what newer ones take (a body written for a newer model, such as
 * Claude Code's for `claude-sonnet-5-5`, sent to it unchanged): a max_tokens above its output limit, adaptive
 * thinking, and `output_config.effort` (Opus 4.5 takes effort). Names of other forms are not checked.
 */
function modelRefusal(body: Obj): string | undefined {
  const model = String(body.model);
  const limit = MAX_OUTPUT.find(([name]) => name.test(model))?.[1];
  if (limit !== undefined && Number(body.max_tokens) > limit)
    return `max_tokens: ${body.max_tokens} > ${limit}, which is the maximum allowed number of output tokens for ${model}`;
  return systemRoleRefusal(body) ?? forcedToolRefusal(body) ?? thinkingRefusal(body);
}

/**
 * Claude Opus 5.5, Sonnet 5.5 and Fable 5.1 refuse forced tool use ("What's new in Claude Opus 5.5": forced tool
 * use returns an error; Sonnet 5.5's page alike): `tool_choice` `any` or `tool` is a 400, `auto` and `none` go.
 */
function forcedToolRefusal(body: Obj): string | undefined {
  const choice = (body.tool_choice ?? {}) as { type?: string };
  if (choice.type !== 'any' && choice.type !== 'tool') return undefined;
  return /^claude-(opus-5-5|sonnet-5-5|fable-5-1)(-\d{8})?$/.test(String(body.model))
    ? `"tool_choice.type.${choice.type}" is not supported for this model. Use "tool_choice.type.auto" or "tool_choice.type.none".`
    : undefined;
}

/**
 * Claude Opus 5.5 and Fable 5.1 always think: `thinking` `disabled` or `enabled` (a manual budget) is a 400 with
 * the documented message ("What's new in Claude Opus 5.5", thinking can't be disabled); adaptive or none goes.
 * Claude Sonnet 5.5 refuses a budget and `disabled` too (it takes `between_tools`, but not at effort xhigh or max).
 * Claude Haiku 5.5 refuses a budget (its migration guide: send adaptive thinking instead), and `disabled` at effort
 * xhigh or max.
 */
function alwaysThinkingRefusal(body: Obj): string | undefined {
  const type = (body.thinking as Obj | undefined)?.type;
  const model = String(body.model);
  // Claude Sonnet 5.5 ("What's new in Claude Sonnet 5.5"): no budget, and thinking is turned off with
  // between_tools, which efforts xhigh and max refuse
  if (/^claude-sonnet-5-5(-\d{8})?$/.test(model)) {
    if (type === 'disabled')
      return '"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" to turn off up-front thinking.';
    const effort = (body.output_config as Obj | undefined)?.effort;
    if (type === 'between_tools' && (effort === 'xhigh' || effort === 'max'))
      return `"thinking.type.between_tools" is not supported with effort "${effort}". Use "thinking.type.adaptive".`;
  }
  if (type === 'enabled' && /^claude-haiku-5-5(-\d{8})?$/.test(model))
    return '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';
  // and thinking turned off at effort xhigh or max ("Prompting Claude Haiku 5.5": disabled works at low to high)
  const haikuEffort = (body.output_config as Obj | undefined)?.effort;
  if (
    type === 'disabled' &&
    (haikuEffort === 'xhigh' || haikuEffort === 'max') &&
    /^claude-haiku-5-5(-\d{8})?$/.test(model)
  )
    return `"thinking.type.disabled" is not supported with effort "${haikuEffort}". Use "thinking.type.adaptive".`;
  if (type !== 'disabled' && type !== 'enabled') return undefined;
  return /^claude-(opus-5-5|fable-5-1|sonnet-5-5)(-\d{8})?$/.test(model)
    ? `"thinking.type.${type}" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`
    : undefined;
}

/**
 * `role: "system"` inside `messages` (wire-formats §1.2): taken from Claude Opus 4.8 on; a Claude model before
 * it refuses the role as any value it does not know. Names of other forms are not checked.
 */
function systemRoleRefusal(body: Obj): string | undefined {
  const v = /^claude-(opus|sonnet|haiku)-(\d)-(\d)(?!\d)/.exec(String(body.model));
  if (!v || Number(v[2]) + Number(v[3]) / 10 >= 4.8) return undefined;
  const i = (body.messages as { role?: unknown }[]).findIndex((m) => m?.role === 'system');
  return i < 0 ? undefined : `messages.${i}.role: Input should be 'user' or 'assistant'`;
}

/**
 * What a Claude model before 4.6 refuses of a body's thinking and effort, on Messages and on count_tokens
 * alike (the count takes the same body without the generation fields, wire-formats §1.1): adaptive thinking,
 * `output_config.effort` (Opus 4.5 takes effort), and a thinking budget under 1,024.
 */
export function thinkingRefusal(body: Obj): string | undefined {
  const always = alwaysThinkingRefusal(body);
  if (always) return always;
  const thinking = body.thinking as Obj | undefined;
  if (thinking?.type === 'enabled' && !(Number(thinking.budget_tokens) >= 1024))
    return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  const model = String(body.model);
  const v = /^claude-(opus|sonnet|haiku)-(\d)-(\d)(?!\d)/.exec(model);
  if (!v) return undefined;
  const version = Number(v[2]) + Number(v[3]) / 10;
  if (version >= 4.6) return undefined;
  if (thinking?.type === 'adaptive') return 'adaptive thinking is not supported on this model';
  const effort = (body.output_config as Obj | undefined)?.effort;
  if (effort !== undefined && !(v[1] === 'opus' && version >= 4.5))
    return 'This model does not support the effort parameter.';
  return undefined;
}

/** The 1M-token window's beta, and the models that take it (Claude Sonnet 4, 4.5, 4.6 and Opus 4.6). */
const CONTEXT_1M_BETA = 'context-1m-2025-08-07';
const CONTEXT_1M_MODELS = /^claude-(sonnet-4(-5|-6)?|opus-4-6)(-\d{8})?$/;
/** Models whose window is 1,000,000 tokens without a beta (their model pages: Opus and Sonnet 5.5, Fable 5.1). */
const NATIVE_1M_MODELS = /^claude-(opus-5-5|sonnet-5-5|fable-5-1|haiku-5-5)(-\d{8})?$/;

/**
 * A prompt over the model's window: 200,000 tokens, or 1,000,000 on a model that takes the 1M beta when the
 * request's anthropic-beta names it (the API's message: `prompt is too long: N tokens > 200000 maximum`).
 */
export function promptTooLong(body: Obj, headers: Headers | undefined): string | undefined {
  const betas = (headers?.get('anthropic-beta') ?? '').split(',').map((b) => b.trim());
  const wide =
    NATIVE_1M_MODELS.test(String(body.model)) ||
    (betas.includes(CONTEXT_1M_BETA) && CONTEXT_1M_MODELS.test(String(body.model)));
  const maximum = wide ? 1_000_000 : 200_000;
  const tokens = billedInputTokens('anthropic', body);
  return tokens > maximum ? `prompt is too long: ${tokens} tokens > ${maximum} maximum` : undefined;
}

/**
 * What the `2026-10-21` API version refuses that `2023-06-01` takes (wire-formats §1.2): `temperature`,
 * `top_p` and `top_k` were removed, so any of them is a 400 even at its default value; the API refuses a
 * removed field as it does any field it does not know.
 */
export function versionRefusal(body: Obj, headers: Headers | undefined): string | undefined {
  const version = headers?.get('anthropic-version') ?? '';
  if (version < '2026-10-21') return undefined;
  const sampling = ['temperature', 'top_p', 'top_k'].find((field) => body[field] !== undefined);
  return sampling === undefined ? undefined : `${sampling}: Extra inputs are not permitted`;
}

/** The fields of the web search tool (`web_search_20250305`, web search tool docs) and of its user_location. */
const WEB_SEARCH_FIELDS = new Set([
  'type',
  'name',
  'max_uses',
  'allowed_domains',
  'blocked_domains',
  'user_location',
  'cache_control',
  'defer_loading',
  'strict',
  'allowed_callers',
]);
const LOCATION_FIELDS = new Set(['type', 'city', 'region', 'country', 'timezone']);

/**
 * The API's 400 for a web search tool it does not take: a field it does not know (OpenAI's search_context_size
 * or filters passed on), a name other than web_search, both domain lists, a location not `approximate`.
 */
function webSearchToolRefusal(body: Obj): string | undefined {
  const tools = Array.isArray(body.tools) ? (body.tools as Obj[]) : [];
  for (const [i, t] of tools.entries()) {
    if (typeof t.type !== 'string' || !/^web_search_\d+$/.test(t.type)) continue;
    const at = `tools.${i}.${t.type}`;
    const extra = Object.keys(t).find((k) => !WEB_SEARCH_FIELDS.has(k));
    if (extra) return `${at}.${extra}: Extra inputs are not permitted`;
    if (t.name !== 'web_search') return `${at}.name: Input should be 'web_search'`;
    if (t.allowed_domains !== undefined && t.blocked_domains !== undefined)
      return `${at}: Cannot specify both allowed_domains and blocked_domains`;
    const location = t.user_location as Obj | undefined;
    if (location === undefined) continue;
    if (location.type !== 'approximate') return `${at}.user_location.type: Input should be 'approximate'`;
    const bad = Object.keys(location).find((k) => !LOCATION_FIELDS.has(k));
    if (bad) return `${at}.user_location.${bad}: Extra inputs are not permitted`;
  }
  return undefined;
}
