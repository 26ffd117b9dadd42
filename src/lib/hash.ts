import { hash } from 'node:crypto';

/** Lowercase hex SHA-256 of a string or bytes (one-shot: no Hash object per call, it runs per request). */
export function sha256Hex(input: string | Uint8Array): string {
  return hash('sha256', input, 'hex');
}

/** First `length` hex characters of the SHA-256 of a token: safe to log (spec 1 §Events, §Versioning). */
export function tokenHashPrefix(token: string, length = 8): string {
  return sha256Hex(token).slice(0, length);
}
