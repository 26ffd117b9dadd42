/**
 * @module A body forwarded as sent (same wire) may replay reasoning another model family wrote: a
 * conversation that moved from an OpenRouter Gemini or DeepSeek model to a Claude one, or the reverse. A
 * provider opens only its own seals and refuses the whole request over another's (Claude: 400 "Invalid
 * `signature` in `thinking` block"; OpenAI: "The encrypted content … could not be verified"), and OpenRouter
 * hands another family's reasoning_details on to the model as they are, so such reasoning is left out, as the
 * translated path leaves it out (canonical/reasoning-origin.ts).
 */
import {
  claudeToolTurnWithoutThinking,
  reasoningDetailBlock,
  withoutReasoning,
} from '../adapters/openrouter/claude-tool-turn.ts';
import { foreignToClaude, ownReasoningFormat, replayableTo } from '../canonical/reasoning-origin.ts';
import type { InboundShape as ShapeName } from '../events/catalog.ts';
import { withoutForeignReasoning } from './shapes/responses/foreign-reasoning.ts';

type Obj = Record<string, unknown>;

/** `body` without the reasoning the routed model cannot take; `body` itself when it has none. */
export function portableReasoning(shape: ShapeName, adapter: string, upstreamModel: string, body: Obj): Obj {
  if (shape === 'openai_responses') return withoutForeignReasoning(body);
  if (shape === 'anthropic' && adapter === 'anthropic') return withoutForeignThinking(body);
  if (shape === 'openai' && adapter === 'openrouter') {
    const own = withOwnReasoningDetails(body, upstreamModel);
    // a Claude tool turn left without its thinking goes without reasoning (adapters/openrouter/claude-tool-turn.ts)
    const messages = Array.isArray(own.messages) ? own.messages : [];
    return claudeToolTurnWithoutThinking(upstreamModel, messages) ? withoutReasoning(own) : own;
  }
  return body;
}

/**
 * A Messages body for Claude without the thinking blocks whose seal Claude did not make (marked with another
 * family's origin, OpenAI's, or none). A tool turn left without its thinking then goes without thinking, as
 * Claude refuses thinking on over it ("Expected `thinking` or `redacted_thinking`").
 */
function withoutForeignThinking(body: Obj): Obj {
  const messages = body.messages;
  if (!Array.isArray(messages) || !messages.some(holdsForeignThinking)) return body;
  const kept: Obj[] = [];
  for (const m of messages as Obj[]) {
    if (!holdsForeignThinking(m)) kept.push(m);
    else {
      const content = (m.content as Obj[]).filter((b) => !isForeignThinking(b));
      if (content.length > 0) kept.push({ ...m, content });
    }
  }
  const out: Obj = { ...body, messages: kept };
  const last = kept.findLast((m) => m.role === 'assistant');
  const blocks = Array.isArray(last?.content) ? (last.content as Obj[]) : [];
  const head = blocks[0]?.type;
  if (blocks.some((b) => b.type === 'tool_use') && head !== 'thinking' && head !== 'redacted_thinking')
    delete out.thinking;
  return out;
}

function holdsForeignThinking(m: unknown): boolean {
  const content = (m as Obj | null)?.content;
  return Array.isArray(content) && content.some(isForeignThinking);
}

function isForeignThinking(b: unknown): boolean {
  const block = b as Obj | null;
  if (block?.type === 'thinking') return foreignToClaude(block.signature);
  if (block?.type === 'redacted_thinking') return foreignToClaude(block.data);
  return false;
}

/**
 * A Chat Completions body for an OpenRouter model with only the reasoning_details of that model's family
 * (`format`); one that names none is another family's when its seal says so (reasoning-origin.ts).
 */
function withOwnReasoningDetails(body: Obj, upstreamModel: string): Obj {
  const messages = body.messages;
  if (!Array.isArray(messages)) return body;
  const own = ownReasoningFormat(upstreamModel);
  let changed = false;
  const out = (messages as Obj[]).map((m) => {
    const details = m?.reasoning_details;
    if (!Array.isArray(details)) return m;
    const kept = details.filter((d) => replayableTo(reasoningDetailBlock(d), own));
    if (kept.length === details.length) return m;
    changed = true;
    const next: Obj = { ...m, reasoning_details: kept };
    if (kept.length === 0) {
      delete next.reasoning_details;
      delete next.reasoning;
    }
    return next;
  });
  return changed ? { ...body, messages: out } : body;
}
