/**
 * @module A Messages request written for another Claude model than the one that serves it, fitted to that one on
 * the same wire. Claude Code asks for `claude-sonnet-5-5` (`--model sonnet`) with what that model takes:
 * max_tokens 128,000, adaptive thinking and `output_config.effort`; a native-name rule sends it to the registry's
 * `claude-sonnet-4-5`, which refuses all three with a 400 (64,000 output tokens at most, a thinking budget, no
 * effort). Only those fields change, in the JSON text; the rest goes as sent.
 */
import { removeJsonMember, replaceJsonValue } from '../../lib/json-splice.ts';
import type { ModelEntry } from '../../models/model-schema.ts';
import type { PassthroughInput } from '../adapter.ts';
import {
  refusesForcedToolChoice,
  refusesThinkingBudget,
  refusesThinkingOffAt,
  takesSampling,
  takesSystemMessages,
  takesThinking,
  thinkingAlwaysOn,
  thinkingOffAs,
  thinkingStyleOf,
} from './model-facts.ts';
import { EFFORT_BUDGET } from './request.ts';

/** The effort adaptive thinking runs at when the request names none (the Messages API's default). */
const DEFAULT_EFFORT = 'high';

/**
 * `input` with its body fitted to `input.upstreamModel` when `input.fitTo` asks for it; else `input` itself. A
 * `POST /v1/messages/count_tokens` body (no max_tokens) gets the same thinking and effort fitting, since the count
 * endpoint refuses what Messages refuses of them.
 */
export function fitToModel(input: PassthroughInput): PassthroughInput {
  if (!input.fitTo) return input;
  const { body, upstreamModel } = input;
  let text = input.bodyText;
  const asked = askedMaxTokens(body);
  const maxTokens = fittedMaxTokens(body, input.fitTo);
  if (maxTokens !== asked) text = replaceJsonValue(text, ['max_tokens'], String(maxTokens)) ?? text;
  const thinking = fittedThinking(body, upstreamModel, maxTokens);
  if (thinking === null) text = removeJsonMember(text, 'thinking');
  else if (thinking !== undefined)
    text = replaceJsonValue(text, ['thinking'], JSON.stringify(thinking)) ?? text;
  const config = objectAt(body, 'output_config');
  if (config?.effort !== undefined && !thinkingStyleOf(upstreamModel).effort) {
    const { effort: _, ...rest } = config;
    text =
      Object.keys(rest).length > 0
        ? (replaceJsonValue(text, ['output_config'], JSON.stringify(rest)) ?? text)
        : removeJsonMember(text, 'output_config');
  }
  // a Claude model after Opus 4.6 takes only temperature 1, top_p from 0.99 and no top_k (400 otherwise)
  for (const name of samplingLeftOut(body, upstreamModel)) text = removeJsonMember(text, name);
  // Opus 5.5, Sonnet 5.5 and Fable 5.1 refuse forced tool use: the model chooses (its parallel-use setting kept)
  const choice = forcedChoiceRefused(body, upstreamModel);
  if (choice) {
    const { type: _, name: __, ...rest } = choice;
    text = replaceJsonValue(text, ['tool_choice'], JSON.stringify({ type: 'auto', ...rest })) ?? text;
  }
  const messages = Array.isArray(body.messages) ? (body.messages as Message[]) : [];
  if (!takesSystemMessages(upstreamModel) && messages.some((m) => m?.role === 'system'))
    text = replaceJsonValue(text, ['messages'], JSON.stringify(foldSystemMessages(messages))) ?? text;
  return text === input.bodyText ? input : { ...input, bodyText: text };
}

/**
 * The fields of `body` fitToModel leaves out when it fits the body to `upstreamModel` (what
 * `svc-dropped-params` names, on POST /v1/messages and count_tokens alike): thinking the model does not take
 * (Claude 3 or 3.5) or that no budget fits beside the fitted max_tokens, an `output_config.effort` no thinking
 * budget carries on a model without effort, and the sampling samplingLeftOut names.
 */
export function fitLeftOut(body: Record<string, unknown>, upstreamModel: string, fitTo: FitTo): string[] {
  const asked = objectAt(body, 'thinking');
  const thinking = fittedThinking(body, upstreamModel, fittedMaxTokens(body, fitTo));
  const effort = objectAt(body, 'output_config')?.effort;
  // the effort adaptive thinking runs at goes into the budget that replaces it, when there is one
  const carried = asked?.type === 'adaptive' && thinking != null;
  return [
    // thinking turned off on a model that always thinks is left out: the model thinks as it must
    ...(thinking === null &&
    (asked?.type !== 'disabled' ||
      thinkingOffAs(upstreamModel) !== 'disabled' ||
      refusesThinkingOffAt(upstreamModel, effort))
      ? ['thinking']
      : []),
    ...(effort != null && !thinkingStyleOf(upstreamModel).effort && !carried ? ['output_config.effort'] : []),
    ...samplingLeftOut(body, upstreamModel),
    ...(forcedChoiceRefused(body, upstreamModel) ? ['tool_choice'] : []),
  ];
}

/** The body's forced tool choice (`any` or `tool`) when `upstreamModel` refuses forced tool use, else undefined. */
function forcedChoiceRefused(
  body: Record<string, unknown>,
  upstreamModel: string,
): Record<string, unknown> | undefined {
  const choice = objectAt(body, 'tool_choice');
  return (choice?.type === 'any' || choice?.type === 'tool') && refusesForcedToolChoice(upstreamModel)
    ? choice
    : undefined;
}

/**
 * The fitting a body gets on its way to `routed` (fitToModel): a body forwarded on the Anthropic wire that names
 * neither the routed model's canonical id nor its provider name (written for another Claude model, or an alias);
 * undefined: it goes as sent. `forwarded`: the client's body goes upstream (the same wire; a count always).
 */
export function fitTarget(
  requestedModel: string,
  routed: { model: ModelEntry; adapter: { name: string }; upstreamModel: string },
  forwarded: boolean,
): FitTo | undefined {
  return forwarded &&
    routed.adapter.name === 'anthropic' &&
    requestedModel !== routed.model.id &&
    requestedModel !== routed.upstreamModel
    ? { maxOutputTokens: routed.model.capabilities.max_output_tokens }
    : undefined;
}

/**
 * The sampling of `body` a Claude model released after Opus 4.6 refuses, which fitToModel leaves out: a
 * temperature below 1, a top_p below 0.99 and any top_k (what `svc-dropped-params` names).
 */
export function samplingLeftOut(body: Record<string, unknown>, upstreamModel: string): string[] {
  if (takesSampling(upstreamModel)) return [];
  const { temperature, top_p: topP, top_k: topK } = body;
  return [
    ...(typeof temperature === 'number' && temperature < 1 ? ['temperature'] : []),
    ...(typeof topP === 'number' && topP < 0.99 ? ['top_p'] : []),
    ...(topK != null ? ['top_k'] : []),
  ];
}

/** What a body is fitted to: the routed model's output limit. */
export type FitTo = NonNullable<PassthroughInput['fitTo']>;

type Message = { role?: unknown; content?: unknown };

function askedMaxTokens(body: Record<string, unknown>): number | undefined {
  return typeof body.max_tokens === 'number' ? body.max_tokens : undefined;
}

/** max_tokens no higher than the model gives; a count_tokens body has none (wire-formats §1.1). */
function fittedMaxTokens(body: Record<string, unknown>, fitTo: FitTo): number | undefined {
  const asked = askedMaxTokens(body);
  return asked === undefined ? undefined : Math.min(asked, fitTo.maxOutputTokens);
}

/**
 * What fitting does to `thinking`: undefined keeps it as sent, null leaves it out, an object replaces it. A Claude
 * 3 or 3.5 model (a family rule's fallback in your models.yaml) has no extended thinking at all; adaptive thinking
 * on a model before 4.6 becomes a budget for the effort asked, leaving a quarter of max_tokens (1,024 at least)
 * for the answer, as a translated request's reasoning_effort gets (request.ts encodeThinking), and a count_tokens
 * body (no max_tokens) the effort's budget as it is; a budget the client set stays below a lowered max_tokens.
 * No room for a budget of 1,024: no thinking.
 */
function fittedThinking(
  body: Record<string, unknown>,
  upstreamModel: string,
  maxTokens: number | undefined,
): Record<string, unknown> | null | undefined {
  const thinking = objectAt(body, 'thinking');
  if (thinking === undefined) return undefined;
  if (!takesThinking(upstreamModel)) return null;
  // Opus 5.5 and Fable 5.1 refuse thinking turned off or given a budget, Sonnet 5 and later a budget: a budget
  // becomes adaptive thinking at the effort asked; thinking turned off is left out where the model always thinks,
  // and is between_tools on Sonnet 5.5 (left out at the efforts that refuse it)
  if (thinking.type === 'enabled' && refusesThinkingBudget(upstreamModel))
    return { type: 'adaptive', ...(thinking.display === undefined ? {} : { display: thinking.display }) };
  if (thinkingAlwaysOn(upstreamModel) && thinking.type !== 'adaptive') return null;
  // thinking turned off where the effort refuses it (Sonnet 5.5's between_tools, Haiku 5.5's disabled): left out
  if (
    thinking.type === 'disabled' &&
    refusesThinkingOffAt(upstreamModel, objectAt(body, 'output_config')?.effort)
  )
    return null;
  if (thinking.type === 'disabled' && thinkingOffAs(upstreamModel) === 'between_tools')
    return { type: 'between_tools' };
  if (thinking.type === 'adaptive' && !thinkingStyleOf(upstreamModel).adaptive) {
    const effort = objectAt(body, 'output_config')?.effort;
    const room =
      maxTokens === undefined
        ? Number.POSITIVE_INFINITY
        : maxTokens - Math.max(1024, Math.floor(maxTokens / 4));
    const asked = typeof effort === 'string' ? EFFORT_BUDGET[effort] : undefined;
    const budget = Math.min(asked ?? EFFORT_BUDGET[DEFAULT_EFFORT], room);
    const display = thinking.display === undefined ? {} : { display: thinking.display };
    return budget >= 1024 ? { type: 'enabled', budget_tokens: budget, ...display } : null;
  }
  if (thinking.type === 'enabled' && maxTokens !== undefined && maxTokens !== askedMaxTokens(body)) {
    if (Number(thinking.budget_tokens) < maxTokens) return undefined;
    return maxTokens - 1 >= 1024 ? { ...thinking, budget_tokens: maxTokens - 1 } : null;
  }
  return undefined;
}

/**
 * Mid-conversation system messages (`role: "system"`, taken from Claude Opus 4.8 on) as user text, for a model
 * that refuses the role: each joins the user turn next to it (tool results stay first in a turn), as a
 * translated request's later system prompts do (request-messages.ts encodeAnthropicMessages).
 */
function foldSystemMessages(messages: Message[]): Message[] {
  // `folded`: the turn holds a system message, so a user turn next to it joins it; other turns go as sent
  const out: Array<{ message: Message; folded: boolean }> = [];
  const blocks = (content: unknown): unknown[] =>
    typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
  const isResult = (b: unknown) => (b as { type?: unknown } | null)?.type === 'tool_result';
  for (const m of messages) {
    const system = m.role === 'system';
    const last = out.at(-1);
    if ((system || m.role === 'user') && last?.message.role === 'user' && (system || last.folded)) {
      const merged = [...blocks(last.message.content), ...blocks(m.content)];
      last.message = {
        ...last.message,
        content: [...merged.filter(isResult), ...merged.filter((b) => !isResult(b))],
      };
      last.folded = system;
    } else out.push({ message: system ? { ...m, role: 'user' } : m, folded: system });
  }
  return out.map((t) => t.message);
}

function objectAt(body: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  const value = body[key];
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
