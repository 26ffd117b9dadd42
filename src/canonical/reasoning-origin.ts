/**
 * @module Where a reasoning block came from. OpenRouter's `reasoning_details[].format` names the model family
 * that wrote a block and sealed its signature or encrypted data; a provider opens only its own seals and
 * refuses the whole request over another's (Claude: 400 "Invalid `signature` in `thinking` block"; OpenAI:
 * "The encrypted content … could not be verified"), and another model's reasoning is not the routed model's
 * own thinking to replay, so reasoning goes back only to the family that wrote it. On the wires with no field
 * for it (a Messages thinking `signature`, a Responses `encrypted_content`) a seal of another family than
 * Claude or OpenAI travels marked `svc-reasoning:<format>:<seal>`, so a client's replay still says its origin.
 */
import { isOpenAISealedReasoning, type RedactedThinkingBlock, type ThinkingBlock } from './message.ts';

/** OpenRouter's reasoning formats (its `ReasoningFormat`), one per model family that seals reasoning. */
export const REASONING_FORMATS = [
  'anthropic-claude-v1',
  'openai-responses-v1',
  'azure-openai-responses-v1',
  'xai-responses-v1',
  'google-gemini-v1',
  'unknown',
] as const;
export type ReasoningFormat = (typeof REASONING_FORMATS)[number];

const CLAUDE: ReasoningFormat = 'anthropic-claude-v1';
const MARK = 'svc-reasoning:';

export function reasoningFormatOf(value: unknown): ReasoningFormat | undefined {
  return (REASONING_FORMATS as readonly unknown[]).includes(value) ? (value as ReasoningFormat) : undefined;
}

/** The format of an OpenRouter model's own reasoning, by its vendor (`google/gemini-2.5-flash`). */
export function ownReasoningFormat(openRouterModel: string): ReasoningFormat {
  // `~anthropic/claude-sonnet-latest`: a family alias
  const vendor = openRouterModel.slice(0, openRouterModel.indexOf('/')).replace(/^~/, '');
  if (vendor === 'anthropic') return CLAUDE;
  if (vendor === 'openai') return 'openai-responses-v1';
  if (vendor === 'google') return 'google-gemini-v1';
  if (vendor === 'x-ai') return 'xai-responses-v1';
  return 'unknown';
}

/**
 * Whether a block can go to a model whose own reasoning is `own`: only one of the same family (OpenAI's and
 * Azure's alike: OpenRouter opens both). Unsigned text from nobody said where goes to any but Claude.
 */
export function replayableTo(block: ThinkingBlock | RedactedThinkingBlock, own: ReasoningFormat): boolean {
  if (own === CLAUDE) return claudeSealed(block);
  const origin = originOf(block);
  return origin === undefined || family(origin) === family(own);
}

/**
 * Whether Claude can take the block back: a seal it issued, never unsigned reasoning (§6 #18), OpenAI's
 * sealed reasoning or another family's.
 */
export function claudeSealed(block: ThinkingBlock | RedactedThinkingBlock): boolean {
  return !!sealOf(block) && originOf(block) === CLAUDE;
}

/** A thinking or redacted thinking block as one of OpenRouter's `reasoning_details` (`format`: its origin). */
export function reasoningDetailOf(b: ThinkingBlock | RedactedThinkingBlock): Record<string, unknown> {
  const format = b.origin ? { format: b.origin } : {};
  if (b.type === 'redacted_thinking') return { type: 'reasoning.encrypted', data: b.data, ...format };
  return {
    type: 'reasoning.text',
    text: b.thinking,
    ...(b.signature ? { signature: b.signature } : {}),
    ...format,
  };
}

/**
 * One of OpenRouter's `reasoning_details` as the block it stands for: `reasoning.text` (its text and seal) and
 * `reasoning.summary` (unsealed text) as thinking, `reasoning.encrypted` as redacted thinking, each with the
 * `format` it names; undefined for a kind this gateway does not know. An empty seal is no seal.
 */
export function reasoningBlockOf(detail: unknown): ThinkingBlock | RedactedThinkingBlock | undefined {
  const d = (detail ?? {}) as Record<string, unknown>;
  const origin = reasoningFormatOf(d.format);
  const from = origin ? { origin } : {};
  if (d.type === 'reasoning.encrypted')
    return typeof d.data === 'string' ? { type: 'redacted_thinking', data: d.data, ...from } : undefined;
  if (d.type === 'reasoning.summary')
    return { type: 'thinking', thinking: textOf(d.summary), signature: null, ...from };
  if (d.type !== 'reasoning.text') return undefined;
  const signature = typeof d.signature === 'string' && d.signature !== '' ? d.signature : null;
  return { type: 'thinking', thinking: textOf(d.text), signature, ...from };
}

/** The seal as a client is handed it where the wire has no field for its origin. */
export function markSeal(seal: string, origin: ReasoningFormat | undefined): string {
  if (origin === undefined || origin === CLAUDE || seal === '' || isOpenAISealedReasoning(seal)) return seal;
  return `${MARK}${origin}:${seal}`;
}

/** A seal a client replayed: the provider's own, and its origin when marked. */
export function unmarkSeal(seal: string): { seal: string; origin?: ReasoningFormat } {
  if (seal.startsWith(MARK)) {
    const rest = seal.slice(MARK.length);
    const at = rest.indexOf(':');
    const origin = reasoningFormatOf(rest.slice(0, at));
    if (origin) return { seal: rest.slice(at + 1), origin };
  }
  return { seal };
}

/** Whether a seal a client replayed as sent is one Claude cannot open (marked, OpenAI's, or none). */
export function foreignToClaude(seal: unknown): boolean {
  return typeof seal !== 'string' || seal === '' || seal.startsWith(MARK) || isOpenAISealedReasoning(seal);
}

/**
 * The family that sealed a block: the one it names, else by its seal, as this gateway hands seals out (a
 * foreign one marked, OpenAI's as `gAAAAA…`, so an unmarked one is Claude's); none for unsigned text.
 */
function originOf(block: ThinkingBlock | RedactedThinkingBlock): ReasoningFormat | undefined {
  if (block.origin) return block.origin;
  const seal = sealOf(block);
  if (!seal) return undefined;
  if (seal.startsWith(MARK)) return 'unknown';
  return isOpenAISealedReasoning(seal) ? 'openai-responses-v1' : CLAUDE;
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function sealOf(block: ThinkingBlock | RedactedThinkingBlock): string | null {
  return block.type === 'thinking' ? block.signature : block.data;
}

function family(format: ReasoningFormat): string {
  return format === 'azure-openai-responses-v1' ? 'openai-responses-v1' : format;
}
