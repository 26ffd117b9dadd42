/**
 * @module Crash-safe file steps shared by backup and restore: temp names beside the target, fsync of
 * files and folders, and a rename that never overwrites.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** A hidden temp path in the target's folder, so the final rename stays on one filesystem. */
export function tempPathBeside(target: string, label: string): string {
  return join(
    dirname(target),
    `.${basename(target)}.${label}-${process.pid}-${randomBytes(4).toString('hex')}`,
  );
}

/** Flushes a file's data (and a folder's entries) to stable storage. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } catch (err) {
    // Some filesystems refuse fsync on a folder; the data fsync already happened.
    if ((err as NodeJS.ErrnoException).code !== 'EINVAL' && (err as NodeJS.ErrnoException).code !== 'EISDIR')
      throw err;
  } finally {
    closeSync(fd);
  }
}

/**
 * Moves `from` to `to` only if `to` does not exist (hard link then unlink, atomic against a racing
 * creator); returns false when `to` exists. Falls back to check-then-rename where links are unsupported.
 */
export function renameNoClobber(from: string, to: string): boolean {
  try {
    linkSync(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw err;
    if (existsSync(to)) return false;
    renameSync(from, to);
    fsyncPath(dirname(to));
    return true;
  }
  rmSync(from, { force: true });
  fsyncPath(dirname(to));
  return true;
}

/** Best-effort removal of a temp file after a failure. */
export function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // nothing more to do; the name is hidden and carries the pid
  }
}
