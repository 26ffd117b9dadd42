/**
 * @module Claude behind OpenRouter with reasoning on refuses a tool loop whose last assistant turn lacks the
 * thinking that made its calls (400 "Expected `thinking` or `redacted_thinking`, but found `tool_use`", which
 * OpenRouter passes on): OpenRouter makes the turn's thinking blocks of its reasoning_details alone. A history
 * rebuilt without them, or one whose reasoning another model family wrote (left out: reasoning-origin.ts),
 * then goes without reasoning, as the Anthropic adapter sends such a turn without thinking.
 */
import type { RedactedThinkingBlock, ThinkingBlock } from '../../canonical/message.ts';
import {
  ownReasoningFormat,
  reasoningBlockOf,
  reasoningFormatOf,
  replayableTo,
} from '../../canonical/reasoning-origin.ts';

type Obj = Record<string, unknown>;

/**
 * Whether a Chat Completions conversation for the OpenRouter model `model` must go without reasoning: a Claude
 * model, and the last assistant turn calls tools with no reasoning detail Claude sealed.
 */
export function claudeToolTurnWithoutThinking(model: string, messages: readonly unknown[]): boolean {
  if (ownReasoningFormat(model) !== 'anthropic-claude-v1') return false;
  const last = messages.findLast((m) => (m as Obj | null)?.role === 'assistant') as Obj | undefined;
  if (!Array.isArray(last?.tool_calls) || last.tool_calls.length === 0) return false;
  const details = Array.isArray(last.reasoning_details) ? (last.reasoning_details as unknown[]) : [];
  return !details.some((d) => replayableTo(reasoningDetailBlock(d), 'anthropic-claude-v1'));
}

/**
 * `body` without the fields that turn OpenRouter's reasoning on (`reasoning` but one that turns it off,
 * `reasoning_effort` but `none`, `include_reasoning`); `body` itself when it has none.
 */
export function withoutReasoning(body: Obj): Obj {
  const reasoning = body.reasoning as Obj | null | undefined;
  const off = reasoning?.enabled === false || reasoning?.effort === 'none';
  const drop = [
    ...(reasoning != null && !off ? ['reasoning'] : []),
    ...(body.reasoning_effort != null && body.reasoning_effort !== 'none' ? ['reasoning_effort'] : []),
    ...(body.include_reasoning === true ? ['include_reasoning'] : []),
  ];
  if (drop.length === 0) return body;
  const out = { ...body };
  for (const name of drop) delete out[name];
  return out;
}

/**
 * One of OpenRouter's reasoning_details as the block it replays (its seal and `format` decide); a kind this
 * gateway does not know counts as unsealed text of the family it names.
 */
export function reasoningDetailBlock(detail: unknown): ThinkingBlock | RedactedThinkingBlock {
  const origin = reasoningFormatOf((detail as Obj | null)?.format);
  return (
    reasoningBlockOf(detail) ?? {
      type: 'thinking',
      thinking: '',
      signature: null,
      ...(origin ? { origin } : {}),
    }
  );
}
