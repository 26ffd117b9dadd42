/**
 * @module Request fingerprints for slot 4 (README §Learned routing): pure functions of RouteFacts, versioned
 * so a change of algorithm never mixes with what older records mean. Structural (revision s1): workspace,
 * images yes/no, the set of tool names, the input-size and message-count buckets. Hybrid (revision h1): the
 * structural fingerprint plus the MinHash bands of the last user message's words (sketch.ts).
 */
import type { RouteFingerprint } from '../../events/catalog.ts';
import { sha256Hex } from '../../lib/hash.ts';
import type { RouteFacts } from '../facts.ts';
import { sketchText } from './sketch.ts';

/** The two fingerprint kinds: the `fingerprint_version` label of svc_pattern_matches_total (spec 1). */
export const FINGERPRINT_VERSIONS = ['structural', 'hybrid'] as const;
export type FingerprintVersion = (typeof FINGERPRINT_VERSIONS)[number];

/** Prefix of structural fingerprints of this revision; raised when the parts or their encoding change. */
export const STRUCTURAL_REVISION = 's1';

/** What route.decided records: enough to rebuild the pattern table from the trace store alone. */
export type RequestFingerprint = RouteFingerprint;

/** The parts the structural fingerprint hashes, as `svc routing explain` shows them. */
export interface StructuralParts {
  workspace: string | null;
  images: boolean;
  /** Sorted, without duplicates. */
  tools: string[];
  /** The smallest power of two at or above the estimated input tokens (0 for none). */
  input_tokens_bucket: number;
  /** The smallest power of two at or above the message count (0 for none). */
  messages_bucket: number;
}

export function structuralParts(facts: RouteFacts): StructuralParts {
  return {
    workspace: facts.workspacePath,
    images: facts.hasImages,
    tools: [...new Set(facts.toolNames ?? [])].sort(),
    input_tokens_bucket: powerOfTwoBucket(facts.estimatedInputTokens),
    messages_bucket: powerOfTwoBucket(facts.messageCount ?? 0),
  };
}

/** Both fingerprints of one request; `text` is the last user message (the hybrid sketch reads it). */
export function fingerprintRequest(facts: RouteFacts, text: string): RequestFingerprint {
  const p = structuralParts(facts);
  const canonical = JSON.stringify([
    p.workspace,
    p.images,
    p.tools,
    p.input_tokens_bucket,
    p.messages_bucket,
  ]);
  return {
    structural: structuralOf(canonical),
    sketch: sketchText(text),
    messages: facts.messageCount ?? 0,
  };
}

/**
 * The table keys a fingerprint is learned and looked up under: structural has one; hybrid has one per
 * sketch band (the structural fingerprint joined to the band), so near-duplicate prompts share a key.
 */
export function patternKeys(print: RequestFingerprint, version: FingerprintVersion): string[] {
  if (version === 'structural') return [print.structural];
  return print.sketch.map((band) => `${print.structural}/${band}`);
}

/** 0 for nothing, else the smallest power of two ≥ n (1, 2, 4, 8, …). */
export function powerOfTwoBucket(n: number): number {
  if (!(n > 0)) return 0;
  return 2 ** Math.ceil(Math.log2(Math.ceil(n)));
}

// --- internal ---

/**
 * `s1:<16 hex>` of a canonical parts string, remembered for the last STRUCTURAL_CACHE_SIZE distinct
 * strings of at most STRUCTURAL_CACHE_KEY_LIMIT characters (at most ~0.5 MiB): a gateway sees a few
 * workspaces, tool sets and buckets over and over, and a Map lookup costs a fraction of a SHA-256 through
 * node:crypto on every request. Keyed by the exact string, so the value is the hash's, bit for bit.
 */
function structuralOf(canonical: string): string {
  const known = STRUCTURAL_CACHE.get(canonical);
  if (known !== undefined) return known;
  const print = `${STRUCTURAL_REVISION}:${sha256Hex(canonical).slice(0, 16)}`;
  if (canonical.length <= STRUCTURAL_CACHE_KEY_LIMIT) {
    if (STRUCTURAL_CACHE.size >= STRUCTURAL_CACHE_SIZE) STRUCTURAL_CACHE.clear();
    STRUCTURAL_CACHE.set(canonical, print);
  }
  return print;
}

const STRUCTURAL_CACHE_SIZE = 256;
const STRUCTURAL_CACHE_KEY_LIMIT = 1024;
const STRUCTURAL_CACHE = new Map<string, string>();
