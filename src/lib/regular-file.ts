/**
 * @module Reads a configuration file the user named (models.yaml, routing.yaml): a device (/dev/zero) or
 * a FIFO would be read without end (readFileSync of /dev/zero grows until memory runs out), so only a
 * regular file is read; a folder is left to readFileSync, whose EISDIR says what it is.
 */
import { readFileSync, statSync } from 'node:fs';

/** The bytes of `path`; throws an Error with code ENOTREG when it is a device, FIFO or socket. */
export function readRegularFile(path: string): Buffer {
  const st = statSync(path);
  if (!st.isFile() && !st.isDirectory()) {
    const err = new Error('not a regular file: a device, FIFO or socket') as NodeJS.ErrnoException;
    err.code = 'ENOTREG';
    throw err;
  }
  return readFileSync(path);
}
