/**
 * @module A Responses request for an OpenAI model (same wire, forwarded as sent) may replay reasoning items
 * another provider's model wrote: Codex resends its whole history (`store: false`) after a switch from a
 * Claude model, whose reasoning items carry Claude's signature (or this gateway's redacted-thinking data) as
 * `encrypted_content`. OpenAI opens only the Fernet tokens it sealed and refuses the whole request otherwise
 * ("The encrypted content … could not be verified", invalid_encrypted_content), so such items are left out,
 * as OpenAI's sealed reasoning is left out on Claude.
 */
import { isOpenAISealedReasoning } from '../../../canonical/message.ts';

/** `body` without the reasoning input items OpenAI cannot open; `body` itself when it has none. */
export function withoutForeignReasoning(body: Record<string, unknown>): Record<string, unknown> {
  const input = body.input;
  if (!Array.isArray(input) || !input.some(isForeignReasoning)) return body;
  return { ...body, input: input.filter((item) => !isForeignReasoning(item)) };
}

function isForeignReasoning(item: unknown): boolean {
  const i = item as { type?: unknown; encrypted_content?: unknown } | null;
  return (
    i?.type === 'reasoning' &&
    typeof i.encrypted_content === 'string' &&
    !isOpenAISealedReasoning(i.encrypted_content)
  );
}
