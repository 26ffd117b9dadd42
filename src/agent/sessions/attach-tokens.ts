/**
 * @module WebSocket attach tokens (spec 2 §Authentication): `atk_<ulid>`, issued by every
 * GET /sessions/{id}, single use, valid 60 seconds, scoped to one session; each ULID's random part is
 * drawn afresh, so a token cannot be guessed from an id or token issued in the same millisecond. In memory only: a restart
 * invalidates them, and a client simply asks for a fresh one.
 */
import { type NewId, newUnguessableId } from '../../lib/ids.ts';
import type { Clock } from '../../lib/time.ts';

export const ATTACH_TOKEN_TTL_MS = 60_000;

/** What presenting a token found: only `ok` uses it up. */
export type AttachOutcome = 'ok' | 'unknown' | 'expired' | 'wrong_session';

export interface AttachTokens {
  /** A fresh token for `sessionId`; earlier tokens stay valid until used or expired. */
  issue(sessionId: string): { token: string; expires_at_us: number };
  /**
   * Uses up `token` for `sessionId`: `ok` once, when it was issued for that session and has not expired;
   * `unknown` for a token never issued or already used. A token presented for another session is not
   * consumed (it may still be used for its own).
   */
  consume(token: string, sessionId: string): AttachOutcome;
  /** Tokens issued and neither used nor expired. */
  readonly size: number;
}

/** One issued token's entry in the table. */
export interface AttachEntry {
  sessionId: string;
  expiresUs: number;
}

export function createAttachTokens(deps: {
  clock: Clock;
  /** The token maker (default: fresh randomness for each, never the server's monotonic ids). */
  newToken?: NewId;
  ttlMs?: number;
  /** The token table, empty (default: a new Map); a test passes one that counts what the sweep reads. */
  table?: Map<string, AttachEntry>;
}): AttachTokens {
  const ttlUs = (deps.ttlMs ?? ATTACH_TOKEN_TTL_MS) * 1000;
  const tokens = deps.table ?? new Map<string, AttachEntry>();
  const newToken = deps.newToken ?? newUnguessableId;
  // tokens are inserted in expiry order (one TTL for all), so the expired ones are a prefix of the map: the
  // sweep stops at the first live one instead of reading every token on every GET /sessions/{id}
  // (consume checks expiry itself, so a token a clock step left behind is never accepted late)
  const sweep = (nowUs: number) => {
    for (const [token, entry] of tokens) {
      if (entry.expiresUs > nowUs) break;
      tokens.delete(token);
    }
  };
  return {
    issue(sessionId) {
      const now = deps.clock.nowUs();
      sweep(now);
      const token = newToken('atk_');
      const expiresUs = now + ttlUs;
      tokens.set(token, { sessionId, expiresUs });
      return { token, expires_at_us: expiresUs };
    },
    consume(token, sessionId) {
      const now = deps.clock.nowUs();
      const entry = tokens.get(token);
      if (!entry) return 'unknown';
      if (entry.expiresUs <= now) {
        tokens.delete(token);
        return 'expired';
      }
      if (entry.sessionId !== sessionId) return 'wrong_session';
      tokens.delete(token);
      return 'ok';
    },
    get size() {
      sweep(deps.clock.nowUs());
      return tokens.size;
    },
  };
}
