/**
 * @module What the provider bills for a call that ended before it said so: a stream the client cancelled
 * or that broke before its usage (OpenAI states usage only in its last chunk, Anthropic its output only in
 * message_delta), a non-streaming body lost on the way. The provider bills the prompt it read and every
 * token it generated, so such a call is never recorded at $0: counts the upstream stated stay, the input it
 * never stated is the request's estimate, and output is at least the generated text weighed by script as the
 * routing estimate weighs input (lib/text-weight.ts: 4 ASCII characters a token, 1 CJK character), so a
 * Japanese answer is not billed at a quarter of its tokens. Estimated counts mark the usage `estimated`
 * (event field usage_estimated). A stream that broke after the upstream's final statement of usage (only
 * its terminal event lost) is billed on that statement.
 */
import { type CanonicalUsage, totalInputTokens } from '../canonical/response.ts';
import { QUARTERS_PER_TOKEN } from '../lib/text-weight.ts';

/**
 * Reported usage of an unfinished call, with the gateway's estimates where the upstream stated less:
 * `inputTokensEstimate` when no input count arrived, and output from `generatedQuarterTokens` (the
 * stream's generatedQuarterTokens()) when it is more than the count stated so far (a cumulative count sent mid-stream is a lower bound).
 */
export function resolvePartialUsage(
  reported: CanonicalUsage,
  inputTokensEstimate: number,
  generatedQuarterTokens: number,
  /** The upstream already stated its final counts (StreamProgress.usageFinal): they are billed as stated. */
  final = false,
  /**
   * The most output the request allows (max_tokens × n, token-bound.ts): a provider never bills more, so
   * neither does the estimate, which weighs text by script and can read several characters of one token as
   * several tokens.
   */
  outputTokensMax = Number.POSITIVE_INFINITY,
): CanonicalUsage {
  const usage: CanonicalUsage = { ...reported };
  if (final) return usage;
  if (totalInputTokens(usage) === 0 && inputTokensEstimate > 0) {
    usage.input_tokens = inputTokensEstimate;
    usage.estimated = true;
  }
  const output = Math.min(Math.ceil(generatedQuarterTokens / QUARTERS_PER_TOKEN), outputTokensMax);
  if (output > usage.output_tokens) {
    usage.output_tokens = output;
    usage.estimated = true;
  }
  return usage;
}
