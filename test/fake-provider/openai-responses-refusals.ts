/**
 * What the Responses API refuses of a request by the model it names (reasoning and sampling options), and a
 * replayed reasoning item it did not seal, for the fake provider (openai-responses.ts).
 */

import { effortRefusal, isChatModelName, isReasoningName } from './openai.ts';
import type { BodyRefusal } from './responses.ts';

/**
 * What the Responses API refuses of a model by its kind: `reasoning.effort` or `.summary` on a model that does
 * not reason (gpt-4.1, gpt-4o, gpt-5-chat-latest; isChatModelName); `reasoning.context`, which only GPT-5.6 and
 * later take (Codex sends all_turns to its own default model); on a reasoning model a temperature or top_p but
 * 1, an effort it does not take and a summary it does not write (summaryRefusal).
 */
export function modelRefusal(body: Record<string, unknown>): string | BodyRefusal | undefined {
  const model = String(body.model);
  const reasoning = (body.reasoning ?? {}) as { effort?: unknown; summary?: unknown; context?: unknown };
  const effort = reasoning.effort;
  if (isChatModelName(model))
    for (const field of ['effort', 'summary'] as const)
      if (reasoning[field] != null)
        return `Unsupported parameter: 'reasoning.${field}' is not supported with this model.`;
  if (reasoning.context != null && !takesReasoningContext(model))
    return {
      message: "Unsupported parameter: 'reasoning.context' is not supported with this model.",
      param: 'reasoning.context',
      code: 'unsupported_parameter',
    };
  if (!isReasoningName(model)) return undefined;
  for (const field of ['temperature', 'top_p'])
    if (body[field] != null && body[field] !== 1)
      return `Unsupported parameter: '${field}' is not supported with this model.`;
  return effortRefusal(model, effort, 'reasoning.effort') ?? summaryRefusal(model, reasoning.summary);
}

/** GPT-5.6 and later (gpt-5.6-sol, gpt-6.1-sol); not gpt-5 to gpt-5.5, gpt-4.x or the o-series. */
function takesReasoningContext(model: string): boolean {
  const gpt = /^gpt-(\d+)(?:\.(\d+))?/i.exec(model);
  return gpt !== null && (Number(gpt[1]) > 5 || (Number(gpt[1]) === 5 && Number(gpt[2] ?? 0) >= 6));
}

/**
 * `reasoning.summary` is auto, concise or detailed (openai/codex#7845: "Invalid value: 'none'. …"), and
 * gpt-5, -mini and -nano write no concise summary (openai/codex#2376: "Unsupported value: 'concise' is not
 * supported with the 'gpt-5-2025-08-07' model. Supported values are: 'detailed'.").
 */
function summaryRefusal(model: string, summary: unknown): BodyRefusal | undefined {
  if (summary == null) return undefined;
  const param = 'reasoning.summary';
  if (summary !== 'auto' && summary !== 'concise' && summary !== 'detailed')
    return {
      message: `Invalid value: '${String(summary)}'. Supported values are: 'concise', 'detailed', and 'auto'.`,
      param,
      code: 'invalid_value',
    };
  if (summary === 'concise' && /^gpt-5(?![.\d])/i.test(model))
    return {
      message: `Unsupported value: 'concise' is not supported with the '${model}' model. Supported values are: 'detailed'.`,
      param,
      code: 'unsupported_value',
    };
  return undefined;
}

/**
 * A replayed reasoning item whose `encrypted_content` OpenAI did not seal (another provider's signature): the
 * API cannot open it and refuses the request (openai/codex#8145, code invalid_encrypted_content). Its own
 * tokens are Fernet tokens, `gAAAAA…`.
 */
export function sealedReasoningRefusal(body: Record<string, unknown>): string | undefined {
  if (!Array.isArray(body.input)) return undefined;
  for (const item of body.input as Array<{ type?: unknown; encrypted_content?: unknown }>) {
    const sealed = item?.type === 'reasoning' ? item.encrypted_content : undefined;
    if (typeof sealed === 'string' && !sealed.startsWith('gAAAAA'))
      return `The encrypted content ${sealed.slice(0, 4)}...${sealed.slice(-4)} could not be verified. Reason: Encrypted content could not be decrypted or parsed.`;
  }
  return undefined;
}
