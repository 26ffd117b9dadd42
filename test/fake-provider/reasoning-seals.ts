/**
 * Reasoning seals as the providers make and check them. Claude signs its thinking and refuses, for the whole
 * request, a thinking block whose signature it did not issue (400 "Invalid `signature` in `thinking` block"),
 * also behind OpenRouter, which hands a replayed reasoning detail of any family on to the model as a thinking
 * block. OpenRouter labels each detail with the family that wrote it (`format`, its ReasoningFormat): a
 * Claude model's carry Anthropic's signatures, a Gemini model's Google's thought signatures, an OpenAI
 * model's OpenAI's sealed content, and other models (DeepSeek, Llama) write unsigned text.
 */

/** How the fake's Claude signatures start (responses.ts signatureFor). */
export const CLAUDE_SIGNATURE_PREFIX = 'EqQBfake';

const FAMILIES: Record<string, { format: string; seal?: string }> = {
  anthropic: { format: 'anthropic-claude-v1', seal: CLAUDE_SIGNATURE_PREFIX },
  google: { format: 'google-gemini-v1', seal: 'CiQBfake' },
  openai: { format: 'openai-responses-v1', seal: 'gAAAAAfake' },
  'x-ai': { format: 'xai-responses-v1', seal: 'xaifake' },
};

/** OpenRouter's `format` for a model's reasoning, and the seal it carries (none for unsigned text). */
export function openRouterReasoning(model: string, claudeSeal: string): { format: string; seal?: string } {
  const family = FAMILIES[model.slice(0, model.indexOf('/'))];
  if (!family) return { format: 'unknown' };
  if (family.seal === CLAUDE_SIGNATURE_PREFIX) return { format: family.format, seal: claudeSeal };
  return { format: family.format, seal: `${family.seal}${claudeSeal.slice(CLAUDE_SIGNATURE_PREFIX.length)}` };
}

/** The Messages API's refusal of a thinking block whose signature Claude did not issue. */
export function claudeSignatureRefusal(body: Record<string, unknown>): string | undefined {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ content?: unknown }>) : [];
  for (const [i, m] of messages.entries()) {
    const content = Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : [];
    for (const [j, b] of content.entries())
      if (b.type === 'thinking' && !String(b.signature ?? '').startsWith(CLAUDE_SIGNATURE_PREFIX))
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
  }
  return undefined;
}

/**
 * OpenRouter's refusal, for a Claude model, of a replayed reasoning.text detail Claude did not sign (another
 * family's, or unsigned): it reaches Claude as a thinking block, and Claude's 400 comes back.
 */
export function openRouterClaudeRefusal(body: Record<string, unknown>): string | undefined {
  if (!String(body.model).startsWith('anthropic/')) return undefined;
  const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : [];
  for (const [i, m] of messages.entries()) {
    const details = Array.isArray(m.reasoning_details)
      ? (m.reasoning_details as Array<Record<string, unknown>>)
      : [];
    for (const [j, d] of details.entries())
      if (d.type === 'reasoning.text' && !String(d.signature ?? '').startsWith(CLAUDE_SIGNATURE_PREFIX))
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
  }
  return openRouterClaudeToolTurnRefusal(body, messages);
}

/**
 * Claude's refusal, with reasoning on, of a tool loop whose last assistant turn (its calls answered by the
 * tool messages at the conversation's end) carries no reasoning Claude sealed: OpenRouter makes the turn's
 * thinking blocks of its reasoning_details alone, and passes Claude's 400 on.
 */
function openRouterClaudeToolTurnRefusal(
  body: Record<string, unknown>,
  messages: Array<Record<string, unknown>>,
): string | undefined {
  const reasoning = body.reasoning as Record<string, unknown> | null | undefined;
  const on =
    (reasoning != null && reasoning.enabled !== false && reasoning.effort !== 'none') ||
    (body.reasoning_effort != null && body.reasoning_effort !== 'none') ||
    body.include_reasoning === true;
  if (!on) return undefined;
  const last = messages.findLastIndex((m) => m.role === 'assistant');
  const calls = last >= 0 && Array.isArray(messages[last].tool_calls) ? messages[last].tool_calls : [];
  // the tool messages (and any user message after them, which Claude merges into the same turn)
  const after = messages.slice(last + 1);
  const answered =
    (calls as unknown[]).length > 0 &&
    after.some((m) => m.role === 'tool') &&
    after.every((m) => m.role === 'tool' || m.role === 'user');
  if (!answered) return undefined;
  const details = Array.isArray(messages[last].reasoning_details)
    ? (messages[last].reasoning_details as Array<Record<string, unknown>>)
    : [];
  const sealed = details.some((d) =>
    d.type === 'reasoning.encrypted'
      ? d.format === 'anthropic-claude-v1'
      : String(d.signature ?? '').startsWith(CLAUDE_SIGNATURE_PREFIX),
  );
  if (sealed) return undefined;
  return `messages.${last}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`tool_use\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`;
}
