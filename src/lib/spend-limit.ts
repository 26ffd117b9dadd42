/**
 * @module The provider's account has no credit left or reached its spend limit (wire-formats §1.11, §2.8, §3):
 * an HTTP 402 (Anthropic, OpenRouter; OpenRouter's in-stream error states it as its code), OpenAI's
 * `insufficient_quota` or Anthropic's `billing_error`. Read where a failure is classified (adapters) and where
 * a stream's failure is told in the client's terms (the Responses shape's `insufficient_quota`).
 */
export function isSpendLimit(status: number, upstreamType: string | undefined): boolean {
  return status === 402 || upstreamType === 'insufficient_quota' || upstreamType === 'billing_error';
}
