/**
 * @module Missing folders above a file the CLI is about to write, made one at a time from the nearest one
 * that exists (Node 24's recursive mkdir spins forever under /proc), each failure one sentence that names
 * the folder and says what to do.
 */
import { accessSync, constants, mkdirSync, type Stats, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { errorMessage, SvcError } from './errors.ts';

/**
 * The mode of folders svc makes for files that hold prompts (trace store, backup, export, keystore): only
 * their owner may list or enter them. A folder that already exists keeps its mode.
 */
export const PRIVATE_FOLDER_MODE = 0o700;

/**
 * Creates `folder` and its missing parents (`mode` for the new ones). `what` names the file they are for
 * and `remedy` what to do instead; a failure is SvcError('io_error').
 */
export function createFolders(folder: string, what: string, remedy: string, mode?: number): void {
  const missing: string[] = [];
  let at = folder;
  for (;;) {
    let st: Stats | undefined;
    try {
      st = statSync(at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw folderError(at, err, what, remedy);
    }
    if (st) {
      if (!st.isDirectory()) throw folderError(at, { code: 'ENOTDIR' }, what, remedy);
      break;
    }
    missing.push(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir, mode === undefined ? undefined : { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw folderError(dir, err, what, remedy);
    }
  }
}

function folderError(dir: string, err: unknown, what: string, remedy: string): SvcError {
  const code = (err as NodeJS.ErrnoException).code ?? errorMessage(err);
  return new SvcError('io_error', {
    message: `Cannot create the folder ${dir} for ${what} (${code}); ${remedy}.`,
    cause: err,
  });
}

/** The folder is on a file system mounted read-only (EROFS), which SQLite reports only as a failed open or I/O. */
export function isReadOnlyFileSystem(folder: string): boolean {
  try {
    accessSync(folder, constants.W_OK);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EROFS';
  }
}
