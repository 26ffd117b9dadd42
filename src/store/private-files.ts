/**
 * @module The trace store is private to its owner (mode 0600), like the keystore: it keeps upstream error
 * text that can quote a prompt. SQLite creates -wal, -shm and -journal files with the mode of the
 * database file, so a store file created 0600 keeps its companions 0600 whatever the umask.
 */
import { chmodSync, closeSync, fchmodSync, openSync, statSync } from 'node:fs';

export const PRIVATE_FILE_MODE = 0o600;

/** The files SQLite keeps for a WAL-mode database at `path`. */
export function storeFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`];
}

/**
 * Creates `path` as an empty file of mode 0600 (SQLite takes an empty file as an empty database, and
 * VACUUM INTO writes into one); false when it already exists.
 */
export function createPrivateFile(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', PRIVATE_FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE); // the mode given to open is narrowed by the umask
  } finally {
    closeSync(fd);
  }
  return true;
}

/** What `tightenStoreFiles` changed, and what it could not (a file owned by another user). */
export interface Tightened {
  files: string[];
  previousModes: string[];
  failed: Array<{ file: string; reason: string }>;
}

/** Sets every existing store file that group or others may access to 0600, the main file first. */
export function tightenStoreFiles(path: string): Tightened {
  const out: Tightened = { files: [], previousModes: [], failed: [] };
  for (const file of storeFiles(path)) {
    let mode: number;
    try {
      const st = statSync(file);
      if (!st.isFile()) continue; // only the store's own files, never a device or folder a path names
      mode = st.mode & 0o777;
    } catch {
      continue; // absent (no WAL yet, or removed by the last connection's close)
    }
    if ((mode & 0o077) === 0) continue;
    try {
      chmodSync(file, PRIVATE_FILE_MODE);
      out.files.push(file);
      out.previousModes.push(mode.toString(8).padStart(4, '0'));
    } catch (err) {
      out.failed.push({ file, reason: (err as NodeJS.ErrnoException).code ?? String(err) });
    }
  }
  return out;
}
