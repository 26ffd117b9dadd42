/**
 * @module Reads a configuration file the user named (models.yaml, routing.yaml): a device (/dev/zero) or
 * a FIFO would be read without end (readFileSync of /dev/zero grows until memory runs out; a FIFO with
 * no writer blocks its open for ever), so only a regular file is read. The path is opened first, without
 * blocking, and the descriptor asked what it is: a path swapped for a FIFO after a look at it cannot
 * reach the read. A folder is left to the read, whose EISDIR says what it is.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';

/** The bytes of `path`; throws an Error with code ENOTREG when it is a device, FIFO or socket. */
export function readRegularFile(path: string): Buffer {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile() && !st.isDirectory()) {
      const err = new Error('not a regular file: a device, FIFO or socket') as NodeJS.ErrnoException;
      err.code = 'ENOTREG';
      throw err;
    }
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
