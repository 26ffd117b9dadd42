/**
 * @module Crash-safe file steps shared by backup and restore: temp names beside the target, fsync of
 * files and folders, and a rename that never overwrites.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * A hidden temp path in the target's folder, so the final rename stays on one filesystem. Until
 * removeQuietly is called for it, SIGINT or SIGTERM removes it (and its SQLite journal) before the
 * process exits, so an interrupted backup or export leaves no partial copy of the store or its data.
 */
export function tempPathBeside(target: string, label: string): string {
  const path = join(
    dirname(target),
    `.${basename(target)}.${label}-${process.pid}-${randomBytes(4).toString('hex')}`,
  );
  pending.add(path);
  if (pending.size === 1) for (const signal of SIGNALS) process.on(signal, removePendingAndExit);
  return path;
}

/**
 * Lets the event loop turn once, so a SIGINT or SIGTERM that arrived during a long synchronous step
 * (VACUUM INTO) is handled (temp files removed, exit) before the step's result is put in place.
 */
export function yieldToSignals(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
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

/** Best-effort removal of a temp file (and the journal an interrupted SQLite write left beside it). */
export function removeQuietly(path: string): void {
  for (const file of [path, `${path}-journal`]) {
    try {
      rmSync(file, { force: true });
    } catch {
      // nothing more to do; the name is hidden and carries the pid
    }
  }
  if (pending.delete(path) && pending.size === 0)
    for (const signal of SIGNALS) process.off(signal, removePendingAndExit);
}

// --- internal ---

/** Temp paths handed out and not yet removed. */
const pending = new Set<string>();
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** A listener replaces the default exit, so it exits itself with the status the default would give. */
function removePendingAndExit(signal: NodeJS.Signals): void {
  for (const path of [...pending]) removeQuietly(path);
  process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
}
