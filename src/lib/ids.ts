import { monotonicFactory } from 'ulidx';

/** A factory of ids; injected so tests can pin them. */
export type NewId = (prefix?: string) => string;

/** Monotonic ULIDs (strictly increasing within a process), optionally prefixed (`gk_`, `gw_`, `sess_`...). */
export function createIdFactory(): NewId {
  const ulid = monotonicFactory();
  return (prefix = '') => `${prefix}${ulid()}`;
}

export const newId: NewId = createIdFactory();
