/**
 * @module What a Claude model takes, read off its name (`claude-sonnet-4-5-20250929`, `claude-opus-4-1`,
 * `claude-sonnet-5`): its thinking style, sampling and structured outputs. A name that is no Claude model's
 * (a compatible server's) gets what was asked.
 */

/** What a Claude model takes for reasoning: adaptive thinking (4.6 and later) and `output_config.effort` (Opus 4.5 too). */
export interface ThinkingStyle {
  /** Extended thinking at all (takesThinking): not on the Claude 3 and 3.5 models. */
  thinking: boolean;
  adaptive: boolean;
  effort: boolean;
}

/**
 * The thinking style of an Anthropic model name (`claude-sonnet-4-5`, `claude-opus-4-1-20250805`,
 * `claude-sonnet-5`): models before 4.6 refuse adaptive thinking and, but for Opus 4.5, effort. A name
 * that is not a Claude model's gets the newest style.
 */
export function thinkingStyleOf(model: string): ThinkingStyle {
  const v = claudeVersionOf(model);
  if (!v) return { thinking: true, adaptive: true, effort: true };
  return {
    thinking: v.version >= 3.7,
    adaptive: v.version >= 4.6,
    effort: v.version >= 4.6 || (v.family === 'opus' && v.version >= 4.5),
  };
}

/**
 * Whether a Claude model takes extended thinking at all: Claude 3.7 Sonnet and later do; the Claude 3 and 3.5
 * models refuse `thinking` with a 400. A name that is no Claude model's takes it as asked.
 */
export function takesThinking(model: string): boolean {
  return thinkingStyleOf(model).thinking;
}

/**
 * Whether a Claude model takes sampling parameters as asked. Models released after Claude Opus 4.6
 * (`claude-opus-4-7`, `claude-sonnet-5`, `claude-mythos-5`) refuse with a 400 any temperature but 1, any top_p
 * below 0.99 and every top_k (the Messages API reference); a Claude name of another form (a newer family)
 * counts as such a model, as for thinking, while a name that is no Claude model's (a compatible server's)
 * gets what was asked.
 */
export function takesSampling(model: string): boolean {
  const v = claudeVersionOf(model);
  return v === undefined ? !/claude/i.test(model) : v.version < 4.7;
}

/**
 * Whether a Claude model takes structured outputs (`output_config.format`, `strict` tools): Claude 4.5 models
 * and later do; Sonnet 4, Opus 4 and 4.1 and the 3.x models refuse them with a 400. A name that is no Claude
 * model's gets them as asked.
 */
export function takesStructuredOutputs(model: string): boolean {
  const v = claudeVersionOf(model);
  return v === undefined || v.version >= 4.5;
}

/**
 * Whether a Claude model refuses thinking turned off or given a budget (`thinking.type` `disabled` or `enabled`,
 * a 400): Claude Opus 5.5 and Fable 5.1 think adaptively always ("What's new in Claude Opus 5.5": thinking can't
 * be disabled, on Fable 5.1 too), and so, by the same reading, do later Opus and Fable models.
 */
export function thinkingAlwaysOn(model: string): boolean {
  const v = claudeVersionOf(model);
  return (
    v !== undefined &&
    (v.family === 'opus' || v.family === 'fable') &&
    v.version >= (v.family === 'opus' ? 5.5 : 5.1)
  );
}

/**
 * Whether a Claude model refuses a thinking budget (`thinking.type: "enabled"`, a 400): Claude Sonnet 5 and later
 * Sonnets (Sonnet 5's page: manual extended thinking returns a 400; Sonnet 5.5's migration guide lists thinking
 * budgets among the settings that do), Claude Haiku 5.5 and later Haikus (its migration guide: a budget is a 400,
 * send adaptive thinking) and the models that always think (thinkingAlwaysOn).
 */
export function refusesThinkingBudget(model: string): boolean {
  const v = claudeVersionOf(model);
  return (
    thinkingAlwaysOn(model) ||
    (v?.family === 'sonnet' && v.version >= 5) ||
    (v?.family === 'haiku' && v.version >= 5.5)
  );
}

/**
 * What a Claude model takes for thinking turned off: `disabled` (most); `between_tools` on Claude Sonnet 5.5 and
 * later Sonnets ("What's new in Claude Sonnet 5.5": `disabled` is a 400 pointing to `between_tools`, the model's
 * lowest thinking setting, itself refused at effort `xhigh` or `max`, see refusesThinkingOffAt); undefined on a
 * model that always thinks (left out).
 */
export function thinkingOffAs(model: string): 'disabled' | 'between_tools' | undefined {
  if (thinkingAlwaysOn(model)) return undefined;
  const v = claudeVersionOf(model);
  return v?.family === 'sonnet' && v.version >= 5.5 ? 'between_tools' : 'disabled';
}

/**
 * Whether a Claude model refuses thinking turned off (thinkingOffAs) at this effort, a 400: Claude Sonnet 5.5's
 * `between_tools` and Claude Haiku 5.5's `disabled` ("Prompting Claude Haiku 5.5": turning thinking off works only
 * at low, medium and high) are refused at effort `xhigh` or `max`, as on their later models. Such a request goes
 * with adaptive thinking (the model's default) instead.
 */
export function refusesThinkingOffAt(model: string, effort: unknown): boolean {
  if (effort !== 'xhigh' && effort !== 'max') return false;
  const v = claudeVersionOf(model);
  return (v?.family === 'sonnet' || v?.family === 'haiku') && v.version >= 5.5;
}

/**
 * Whether a Claude model refuses forced tool use (`tool_choice` `any` or `tool`, a 400): Claude Opus 5.5, Fable 5.1
 * and Sonnet 5.5 (their "What's new" pages: forced tool use returns an error), and later models of those families.
 * `auto` and `none` are taken.
 */
export function refusesForcedToolChoice(model: string): boolean {
  const v = claudeVersionOf(model);
  if (!v) return false;
  const from = FORCED_TOOL_REFUSED_FROM[v.family];
  return from !== undefined && v.version >= from;
}

const FORCED_TOOL_REFUSED_FROM: Readonly<Record<string, number>> = { opus: 5.5, sonnet: 5.5, fable: 5.1 };

/** Family and version (4.5 for `claude-sonnet-4-5-20250929`) of an Opus, Sonnet, Haiku, Fable or Mythos model name. */
function claudeVersionOf(model: string): { family: string; version: number } | undefined {
  const old = /claude-(\d)-(?:(\d)-)?(opus|sonnet|haiku)/.exec(model); // 3.x, 3.5, 3.7
  if (old) return { family: old[3]!, version: Number(old[1]) + Number(old[2] ?? 0) / 10 };
  const m = /claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d{1,2})(?!\d))?/.exec(model);
  return m ? { family: m[1]!, version: Number(m[2]) + Number(m[3] ?? 0) / 10 } : undefined;
}

/**
 * Whether a Claude model takes `role: "system"` entries inside `messages` (wire-formats §1.2: introduced with
 * Claude Opus 4.8; earlier models refuse the role with a 400). A name that is no Claude model's takes them.
 */
export function takesSystemMessages(model: string): boolean {
  const v = claudeVersionOf(model);
  return v === undefined || v.version >= 4.8;
}
