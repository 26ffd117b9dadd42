/**
 * `svc analytics user-export <user_id>`: one user's events as JSON lines, streamed from the store page
 * by page to stdout, or to `--out` (its missing folders made; written beside it as a private temp file,
 * renamed when complete).
 */

import { existsSync, lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { defineCommand } from 'citty';
import { assertUserId, type ExportSink, resolveWindow, runUserExport } from '../../../analytics/index.ts';
import { readEnv } from '../../../config/env.ts';
import {
  DEFAULT_DB_PATH_HELP,
  resolveStoreTarget,
  type StoreFlags,
  type StoreTarget,
} from '../../../config/paths.ts';
import { errorMessage, SvcError } from '../../../lib/errors.ts';
import { createFolders, PRIVATE_FOLDER_MODE } from '../../../lib/folders.ts';
import { formatSummaryLines } from '../../../store/backup.ts';
import { describeWriteFailure, removeQuietly, storeFileAt, tempPathBeside } from '../../../store/files.ts';
import { runLongStatements } from '../../../store/statement-bounds.ts';
import { type CommandRuntime, openCommandRuntime } from '../../runtime.ts';
import { databaseUrlArg, requireFilePath, storeFlagsOf } from '../../store-flags.ts';

export default defineCommand({
  meta: { name: 'user-export', description: "Stream one user's events as JSON lines" },
  args: {
    user_id: { type: 'positional', required: true, description: 'User id (^[A-Za-z0-9_-]{1,200}$)' },
    from: {
      type: 'string',
      description: 'Window start, ISO 8601, UTC without a zone (inclusive; default all time)',
    },
    to: {
      type: 'string',
      description: 'Window end, ISO 8601, UTC without a zone (exclusive; default all time)',
    },
    out: {
      type: 'string',
      description: 'Write to this file (mode 0600, replaced when complete) instead of stdout',
    },
    'db-path': {
      type: 'string',
      description: `Trace store path (default SVC_DB_PATH or ${DEFAULT_DB_PATH_HELP})`,
    },
    ...databaseUrlArg,
  },
  async run({ args }) {
    const userId = assertUserId(args.user_id);
    const window = resolveWindow({ from: args.from, to: args.to }, { names: { from: '--from', to: '--to' } });
    // "-" is standard output, as to most tools (never a file named "-")
    const asked =
      args.out === undefined || args.out === '-'
        ? undefined
        : requireFilePath(args.out, '--out', '; leave it out to write to stdout');
    // checked as given first: /dev/stdout's /proc link to a pipe or socket reads 'pipe:[…]', which names no path
    if (asked !== undefined) refuseNonRegularFile(asked, userId);
    // a link to an existing file names that file: it is written (as a shell's > would), the link stays
    const out = asked === undefined ? undefined : throughLink(asked);
    if (out !== undefined) {
      refuseNonRegularFile(out, userId);
      refuseStoreFile(out, resolveStoreTarget(readEnv(), storeFlagsOf(args)));
    }
    // an export reads every event of the window: it may take minutes on a large PostgreSQL store
    await withRuntime(storeFlagsOf(args), (rt) =>
      runLongStatements(async () => {
        if (out === undefined) {
          await runUserExport(rt, { userId, window }, stdoutSink());
          return;
        }
        const s = await writeFileAtomically(out, (sink, commit) =>
          runUserExport(rt, { userId, window }, sink, { drained: commit }),
        );
        const lines = formatSummaryLines([
          ['user_id', s.userId],
          ['out', out],
          ['rows', s.rowCount],
          ['bytes', s.byteCount],
          ['window_start', s.window.start],
          ['window_end', s.window.end],
        ]);
        process.stdout.write(`${lines}\n`);
      }),
    );
  },
});

// --- internal ---

/**
 * The file a link at `path` points to (links of links too), whether or not it exists yet: it is the one
 * written, as a shell's > would, and the link stays. `path` itself when it is no link (or a loop of links).
 */
function throughLink(path: string): string {
  try {
    if (!lstatSync(path).isSymbolicLink()) return path;
    if (existsSync(path)) return realpathSync(path);
    // a link to a file not there yet (a link to a rotated file): the export creates that file
    let target = path;
    const isLink = (p: string) => lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink() === true;
    for (let hops = 0; hops < MAX_LINK_HOPS && isLink(target); hops++)
      target = resolve(dirname(target), readlinkSync(target));
    return isLink(target) ? path : target;
  } catch {
    return path; // no such name, or a file where a folder should be: the checks after this one say so
  }
}

/** Links followed to find a missing file (the kernel's own limit). */
const MAX_LINK_HOPS = 40;

/**
 * `--out` naming the trace store (or its -wal, -shm or -journal, by path or by link) would rename the
 * export over it once complete, leaving JSON lines where the store was: refused before anything is read.
 */
function refuseStoreFile(out: string, target: StoreTarget): void {
  if (target.engine !== 'sqlite') return;
  const file = storeFileAt(out, target.path);
  if (file !== undefined)
    throw new SvcError('usage_error', {
      message: `--out ${out} is ${file === resolve(target.path) ? 'the trace store itself' : `the trace store's file ${file}`}; the export would replace it, so choose another file.`,
    });
}

/**
 * `--out` naming a folder could never take the file, and one naming any other file that is not a regular
 * one (a named pipe, a device such as /dev/null or /dev/stdout, a socket; through a link too) would be
 * replaced by the temp file's rename: both refused before anything is read or audited.
 */
function refuseNonRegularFile(out: string, userId: string): void {
  const stat = statSync(out, { throwIfNoEntry: false });
  if (stat === undefined || stat.isFile()) return;
  if (stat.isDirectory())
    throw new SvcError('usage_error', {
      message: `--out ${out} is a folder; name a file in it, such as ${join(out, `${userId}.jsonl`)}.`,
    });
  const kind = stat.isFIFO()
    ? 'a named pipe'
    : stat.isCharacterDevice() || stat.isBlockDevice()
      ? 'a device'
      : stat.isSocket()
        ? 'a socket'
        : 'a special file';
  throw new SvcError('usage_error', {
    message: `--out ${out} is not a regular file but ${kind}, which the export would replace with a file; name a regular file, or leave --out out and redirect standard output.`,
  });
}

async function withRuntime(flags: StoreFlags, fn: (rt: CommandRuntime) => Promise<void>) {
  const rt = await openCommandRuntime({ dbPathFlag: flags.dbPath, databaseUrlFlag: flags.databaseUrl });
  try {
    await fn(rt);
  } catch (err) {
    await rt.close().catch(() => undefined);
    throw err;
  }
  await rt.close();
}

/** Each chunk resolves once stdout has taken it (backpressure); a closed pipe fails the export. */
function stdoutSink(): ExportSink {
  let failure: unknown;
  process.stdout.on('error', (err) => {
    failure ??= err;
  });
  return (chunk) =>
    new Promise<void>((resolve, reject) => {
      if (failure) return reject(stdoutFailed(failure));
      process.stdout.write(chunk, (err) => (err ? reject(stdoutFailed(err)) : resolve()));
    });
}

/** A reader that went away (EPIPE) closed the output; anything else (a full disk) failed a write. */
function stdoutFailed(cause: unknown): SvcError {
  const code = (cause as NodeJS.ErrnoException | null)?.code;
  const closed = code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED' || code === 'ECONNRESET';
  return new SvcError('io_error', {
    message: closed
      ? `Standard output closed before the export finished (${errorMessage(cause)}); no audit event was recorded, so run the export again into a reader that takes every line, or use --out.`
      : `Cannot write the export to standard output (${errorMessage(cause)}); no audit event was recorded, so check where it goes (a full disk?) and run the export again, or use --out.`,
    cause,
  });
}

/**
 * Streams into a private temp file beside `path`; `commit` (fsync, rename over `path`) is run by the export
 * before it records its audit event, so a file that cannot be put in place is never audited as exported.
 */
async function writeFileAtomically<T>(
  path: string,
  fn: (sink: ExportSink, commit: () => Promise<void>) => Promise<T>,
): Promise<T> {
  // missing folders are made, as backup and restore make theirs (after the store opened and the id passed)
  createFolders(dirname(path), 'the export', 'choose an --out in a writable folder', PRIVATE_FOLDER_MODE);
  const tmp = tempPathBeside(path, 'export');
  // a read-only, unwritable or full disk says which (store/files.ts, as backup and restore do)
  const ioError = (cause: unknown) =>
    describeWriteFailure('the export', path, cause, 'choose an --out in a writable folder') ??
    new SvcError('io_error', {
      message: `Cannot write the export to ${path} (${errorMessage(cause).replaceAll(tmp, path)}); check the folder is writable.`,
      cause,
    });
  try {
    const fh = await open(tmp, 'wx', 0o600).catch((err) => Promise.reject(ioError(err)));
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await fh.close();
    };
    try {
      return await fn(
        (chunk) => fh.appendFile(chunk, 'utf8').catch((err) => Promise.reject(ioError(err))),
        async () => {
          await fh.sync().catch((err) => Promise.reject(ioError(err)));
          await close();
          await rename(tmp, path).catch((err) => Promise.reject(ioError(err)));
        },
      );
    } finally {
      await close();
    }
  } finally {
    removeQuietly(tmp);
  }
}
