import { getRandomValues } from 'node:crypto';
import { decodeTime } from 'ulidx';

/** A factory of ids; injected so tests can pin them. */
export type NewId = (prefix?: string) => string;

/** Crockford's base 32, the ULID alphabet. */
const ENCODING = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_LEN = 10;
const ULID_LEN = 26;
/** The largest time a ULID's 48 bits hold. */
const TIME_MAX = 2 ** 48 - 1;
/** Each character code's digit in ENCODING. */
const DIGIT_OF = new Int8Array(128).fill(-1);
for (let d = 0; d < ENCODING.length; d++) DIGIT_OF[ENCODING.charCodeAt(d)] = d;

/**
 * Monotonic ULIDs (strictly increasing within a process), optionally prefixed (`gk_`, `gw_`, `sess_`...):
 * ulidx's monotonicFactory's ids (10 characters of Unix ms, 16 random; within one millisecond, or when the
 * clock goes back, the last id's random part plus one), written into one buffer and read out as one string,
 * where ulidx built each id a character at a time (~40 short-lived strings per id, several ids per request).
 */
export function createIdFactory(): NewId {
  const chars = Buffer.alloc(ULID_LEN);
  const random = pooledRandomBytes();
  let lastTime = -1;
  return (prefix = '') => {
    const now = Date.now();
    if (now > lastTime) {
      if (now > TIME_MAX) throw new Error(`Cannot encode a time larger than ${TIME_MAX}: ${now}`);
      lastTime = now;
      let t = now;
      for (let i = TIME_LEN - 1; i >= 0; i--) {
        const digit = t % 32;
        chars[i] = ENCODING.charCodeAt(digit);
        t = (t - digit) / 32;
      }
      for (let i = TIME_LEN; i < ULID_LEN; i++) chars[i] = ENCODING.charCodeAt(random() & 31);
    } else incrementRandom(chars);
    const id = chars.toString('latin1');
    return prefix === '' ? id : prefix + id;
  };
}

export const newId: NewId = createIdFactory();

/** The creation time (Unix ms) a bare ULID carries in its first 10 characters. */
export function idTimeMs(id: string): number {
  return decodeTime(id);
}

/**
 * Uniform random bytes drawn from the OS CSPRNG 4096 at a time (asking the OS once per character was 6 %
 * of the gateway's CPU per request); a byte's low 5 bits are a uniform base-32 digit.
 */
function pooledRandomBytes(size = 4096): () => number {
  const pool = new Uint8Array(size);
  let next = size;
  return () => {
    if (next === size) {
      getRandomValues(pool);
      next = 0;
    }
    return pool[next++];
  };
}

/** The random part (characters 10..25) plus one, in base 32; all Z's cannot be raised (as ulidx). */
function incrementRandom(chars: Buffer): void {
  for (let i = ULID_LEN - 1; i >= TIME_LEN; i--) {
    const digit = DIGIT_OF[chars[i]];
    if (digit < 31) {
      chars[i] = ENCODING.charCodeAt(digit + 1);
      return;
    }
    chars[i] = ENCODING.charCodeAt(0);
  }
  throw new Error('Cannot increment this ULID: its random part is at its largest');
}
