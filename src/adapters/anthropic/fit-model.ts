/**
 * @module A Messages request written for another Claude model than the one that serves it, fitted to that one on
 * the same wire. Claude Code asks for `claude-sonnet-5-5` (`--model sonnet`) with what that model takes:
 * max_tokens 128,000, adaptive thinking and `output_config.effort`; a native-name rule sends it to the registry's
 * `claude-sonnet-4-5`, which refuses all three with a 400 (64,000 output tokens at most, a thinking budget, no
 * effort). Only those fields change, in the JSON text; the rest goes as sent.
 */
import { removeJsonMember, replaceJsonValue } from '../../lib/json-splice.ts';
import type { PassthroughInput } from '../adapter.ts';
import { takesSampling, takesSystemMessages, takesThinking, thinkingStyleOf } from './model-facts.ts';
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
  const asked = typeof body.max_tokens === 'number' ? body.max_tokens : undefined;
  const maxTokens = asked === undefined ? undefined : Math.min(asked, input.fitTo.maxOutputTokens);
  if (maxTokens !== asked) text = replaceJsonValue(text, ['max_tokens'], String(maxTokens)) ?? text;
  const style = thinkingStyleOf(upstreamModel);
  const thinking = objectAt(body, 'thinking');
  const config = objectAt(body, 'output_config');
  const effort = typeof config?.effort === 'string' ? config.effort : undefined;
  if (thinking !== undefined && !takesThinking(upstreamModel)) {
    // a Claude 3 or 3.5 model (a family rule's fallback in your models.yaml) has no extended thinking at all
    text = removeJsonMember(text, 'thinking');
  } else if (thinking?.type === 'adaptive' && !style.adaptive) {
    // a budget for the effort asked, leaving a quarter of max_tokens (1,024 at least) for the answer, as a
    // translated request's reasoning_effort gets (request.ts encodeThinking); no room for one: no thinking.
    // A count_tokens body has no max_tokens (wire-formats §1.1): the effort's budget as it is.
    const room =
      maxTokens === undefined
        ? Number.POSITIVE_INFINITY
        : maxTokens - Math.max(1024, Math.floor(maxTokens / 4));
    const budget = Math.min(EFFORT_BUDGET[effort ?? DEFAULT_EFFORT] ?? EFFORT_BUDGET[DEFAULT_EFFORT], room);
    const display = thinking.display === undefined ? {} : { display: thinking.display };
    text =
      budget >= 1024
        ? (replaceJsonValue(
            text,
            ['thinking'],
            JSON.stringify({ type: 'enabled', budget_tokens: budget, ...display }),
          ) ?? text)
        : removeJsonMember(text, 'thinking');
  } else if (thinking?.type === 'enabled' && maxTokens !== asked && maxTokens !== undefined) {
    // a budget must stay below max_tokens, now lower than the client asked
    const budget = Number(thinking.budget_tokens);
    if (budget >= maxTokens)
      text =
        maxTokens - 1 >= 1024
          ? (replaceJsonValue(text, ['thinking', 'budget_tokens'], String(maxTokens - 1)) ?? text)
          : removeJsonMember(text, 'thinking');
  }
  if (effort !== undefined && !style.effort) {
    const { effort: _, ...rest } = config!;
    text =
      Object.keys(rest).length > 0
        ? (replaceJsonValue(text, ['output_config'], JSON.stringify(rest)) ?? text)
        : removeJsonMember(text, 'output_config');
  }
  // a Claude model after Opus 4.6 takes only temperature 1, top_p from 0.99 and no top_k (400 otherwise)
  for (const name of samplingLeftOut(body, upstreamModel)) text = removeJsonMember(text, name);
  const messages = Array.isArray(body.messages) ? (body.messages as Message[]) : [];
  if (!takesSystemMessages(upstreamModel) && messages.some((m) => m?.role === 'system'))
    text = replaceJsonValue(text, ['messages'], JSON.stringify(foldSystemMessages(messages))) ?? text;
  return text === input.bodyText ? input : { ...input, bodyText: text };
}

/**
 * Whether `output_config.effort` of `body` is left out by fitToModel without going into a thinking budget (no
 * adaptive thinking to carry it): what `svc-dropped-params` names.
 */
export function effortLeftOut(body: Record<string, unknown>, upstreamModel: string): boolean {
  const effort = objectAt(body, 'output_config')?.effort;
  return (
    effort != null &&
    !thinkingStyleOf(upstreamModel).effort &&
    (objectAt(body, 'thinking')?.type !== 'adaptive' || !takesThinking(upstreamModel))
  );
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

type Message = { role?: unknown; content?: unknown };

/**
 * Mid-conversation system messages (`role: "system"`, taken from Claude Opus 4.8 on) as user text, for a model
 * that refuses the role: each joins the user turn next to it (tool results stay first in a turn), as a
 * translated request's later system prompts do (request.ts encodeAnthropicMessages).
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
