import { getRandomValues } from 'node:crypto';
import { decodeTime, monotonicFactory, ulid } from 'ulidx';

/** A factory of ids; injected so tests can pin them. */
export type NewId = (prefix?: string) => string;

/** Monotonic ULIDs (strictly increasing within a process), optionally prefixed (`gk_`, `gw_`, `sess_`...). */
export function createIdFactory(): NewId {
  const ulid = monotonicFactory(pooledRandom());
  return (prefix = '') => `${prefix}${ulid()}`;
}

export const newId: NewId = createIdFactory();

/**
 * ULIDs whose 80 random bits are drawn afresh for each id (the OS CSPRNG), so none can be told from
 * another: a monotonic id made in the same millisecond as one a client saw is that id plus one. For
 * credentials such as WebSocket attach tokens; not ordered within a millisecond.
 */
export const newUnguessableId: NewId = (prefix = '') => `${prefix}${ulid()}`;

/** The creation time (Unix ms) a bare ULID carries in its first 10 characters. */
export function idTimeMs(id: string): number {
  return decodeTime(id);
}

/**
 * A uniform [0, 1) source for ulidx drawn from the OS CSPRNG 1024 words at a time: ulidx's default asks
 * the OS once per character (16 calls per id), which was 6 % of the gateway's CPU per request.
 */
export function pooledRandom(size = 1024): () => number {
  const pool = new Uint32Array(size);
  let next = size;
  return () => {
    if (next === size) {
      getRandomValues(pool);
      next = 0;
    }
    return pool[next++] / 0x1_0000_0000;
  };
}
