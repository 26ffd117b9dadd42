/**
 * @module A keystore file other users can write is a way into the gateway: any of them could add a record
 * holding the SHA-256 of a token of their own and spend the provider keys. The gateway therefore takes its keys
 * only from a file no other user can write: one it may change is set to 0600 (what the key commands write),
 * with a warning; one it may not (another user's file) is refused, but on a read-only mount (nothing writes it
 * through this path), which is only warned about.
 */
import { chmodSync, statSync } from 'node:fs';
import { SvcError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';

const KEYSTORE_FILE_MODE = 0o600;
/** Group and others write bits. */
const WRITABLE_BY_OTHERS = 0o022;
/** Read-only keystores already warned about (path and mode). */
const warnedReadOnly = new Set<string>();

/**
 * Makes sure no other user can write the keystore at `path` (a link is judged by the file it leads to):
 * tightens it to 0600 with a warning, or throws `keystore_invalid` when its mode cannot be changed (but on a
 * read-only file system: a warning). An
 * absent file, or anything but a regular file, is left to the reader.
 */
export function guardKeystoreWriters(path: string, log: Logger): void {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st?.isFile() || (st.mode & WRITABLE_BY_OTHERS) === 0) return;
  const previousMode = (st.mode & 0o777).toString(8).padStart(4, '0');
  try {
    chmodSync(path, KEYSTORE_FILE_MODE);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    if (code === 'EROFS') {
      // a read-only mount (a Kubernetes Secret with a loose defaultMode): nobody writes it through this path;
      // said once, not at every reload
      if (warnedReadOnly.has(`${path}\0${previousMode}`)) return;
      warnedReadOnly.add(`${path}\0${previousMode}`);
      log.warn('the keystore has a mode that lets other users write it, on a read-only mount', {
        keystore: path,
        mode: previousMode,
      });
      return;
    }
    throw new SvcError('keystore_invalid', {
      message: `The keystore ${path} is refused because other users can write it (mode ${previousMode}), so any of them could add a key, and svc cannot change its mode (${code}); make it writable by its owner only (chmod 600, as its owner) and start svc again.`,
      cause: err,
    });
  }
  log.warn('the keystore was writable by other users; it is now mode 0600', {
    keystore: path,
    previous_mode: previousMode,
  });
}
