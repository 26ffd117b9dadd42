/**
 * @module Whole-file reads and writes on a checked real path, opened with O_NOFOLLOW so a symlink swapped in
 * as the final component after the workspace check fails the open (ELOOP) instead of being followed.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { O_NOFOLLOW } from './workspace-path.ts';

export async function readNoFollow(real: string): Promise<Buffer> {
  const fh = await open(real, constants.O_RDONLY | O_NOFOLLOW);
  try {
    if ((await fh.stat()).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

/** Creates or truncates the file (mode 0666 minus umask when created; an existing file keeps its mode). */
export async function writeNoFollow(real: string, data: string): Promise<void> {
  const fh = await open(real, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | O_NOFOLLOW, 0o666);
  try {
    await fh.writeFile(data, 'utf8');
  } finally {
    await fh.close();
  }
}
