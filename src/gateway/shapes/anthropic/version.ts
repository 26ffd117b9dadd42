/**
 * @module The `anthropic-version` header (wire-formats §1.2): SDK 0.x sends `2023-06-01`, SDK ≥ 1.0 sends
 * `2026-10-21`. Both are accepted; the value is forwarded to an Anthropic upstream on the same wire.
 */

export const ANTHROPIC_VERSIONS = ['2023-06-01', '2026-10-21'] as const;
export type AnthropicVersion = (typeof ANTHROPIC_VERSIONS)[number];

/** Version the gateway assumes when a client sends none (the 0.x one, which accepts sampling params). */
export const DEFAULT_ANTHROPIC_VERSION: AnthropicVersion = '2023-06-01';

/**
 * The version to serve for a header value. Missing → default. Unknown dated values are accepted as the
 * newest known version (the API may add versions; refusing them would break newer SDKs).
 */
export function resolveAnthropicVersion(header: string | undefined): AnthropicVersion {
  const value = header?.trim();
  if (!value) return DEFAULT_ANTHROPIC_VERSION;
  if ((ANTHROPIC_VERSIONS as readonly string[]).includes(value)) return value as AnthropicVersion;
  return value < ANTHROPIC_VERSIONS[1] ? ANTHROPIC_VERSIONS[0] : ANTHROPIC_VERSIONS[1];
}

/** True when sampling parameters are forbidden (2026-10-21 removed temperature/top_p/top_k). */
export function forbidsSampling(version: AnthropicVersion): boolean {
  return version >= '2026-10-21';
}

/** Inbound headers worth forwarding to an Anthropic upstream (lowercase names). */
export function pickAnthropicHeaders(headers: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  out['anthropic-version'] = resolveAnthropicVersion(headers['anthropic-version']);
  const beta = headers['anthropic-beta'];
  if (beta) out['anthropic-beta'] = beta;
  return out;
}
