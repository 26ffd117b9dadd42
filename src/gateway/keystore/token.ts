/**
 * @module Gateway tokens: `gw_<ulid>` whose 80 random bits come straight from the CSPRNG (never the
 * monotonic id factory, whose successive ids differ by one). Only the SHA-256 of a token is stored.
 */
import { randomBytes } from 'node:crypto';
import { encodeTime } from 'ulidx';
import { sha256Hex } from '../../lib/hash.ts';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Every gateway token starts so (spec 1: `gw_<ulid>`); provider keys never do. */
export const TOKEN_PREFIX = 'gw_';

/** Whether a credential a client sent has the form of a gateway token (it may still be unknown). */
export function isGatewayTokenShaped(value: string): boolean {
  return value.startsWith(TOKEN_PREFIX);
}

/** A fresh plaintext token; print it once and drop it. */
export function createToken(nowMs: number = Date.now()): string {
  const bytes = randomBytes(10); // 80 bits → 16 base32 characters
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  let random = '';
  for (let i = 0; i < 16; i++) {
    random = CROCKFORD[Number(bits & 31n)] + random;
    bits >>= 5n;
  }
  return `${TOKEN_PREFIX}${encodeTime(nowMs, 10)}${random}`;
}

/** The keystore's lookup key for a token (spec 1 §Gateway key record). */
export function hashToken(token: string): string {
  return sha256Hex(token);
}
