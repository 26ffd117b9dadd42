/**
 * @module Opens, whole-file reads and writes on a checked real path. Every open uses O_NOFOLLOW, so a symlink
 * swapped in as the final component after the workspace check fails the open (ELOOP) instead of being
 * followed, and O_NONBLOCK, so a named pipe (or a device) never blocks the turn in open(); anything that is
 * not a regular file is then refused (ENOTREG) before a byte is read or written.
 */
import { constants, type Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { O_NOFOLLOW } from './workspace-path.ts';

/** The code of the error openRegular throws for a FIFO, socket or device (fsFailure names it). */
export const NOT_REGULAR = 'ENOTREG';

/** O_NONBLOCK where the platform has it (no effect on regular files). */
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

/** Opens a regular file (a directory is EISDIR, a FIFO, socket or device ENOTREG) with its stat. */
export async function openRegular(
  real: string,
  flags: number,
  mode?: number,
): Promise<{ fh: FileHandle; stat: Stats }> {
  const fh = await open(real, flags | O_NOFOLLOW | O_NONBLOCK, mode);
  try {
    const stat = await fh.stat();
    if (stat.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    if (!stat.isFile()) throw Object.assign(new Error('not a regular file'), { code: NOT_REGULAR });
    return { fh, stat };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

export async function readNoFollow(real: string): Promise<Buffer> {
  const { fh } = await openRegular(real, constants.O_RDONLY);
  try {
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

/** Truncates the file or creates it (mode 0666 minus umask when created; an existing file keeps its mode). */
export async function writeNoFollow(real: string, data: string | Buffer): Promise<void> {
  // O_TRUNC only once the file is known to be regular: the open itself never truncates
  const { fh } = await openRegular(real, constants.O_WRONLY | constants.O_CREAT, 0o666);
  try {
    await fh.truncate(0);
    await fh.writeFile(data);
  } finally {
    await fh.close();
  }
}
