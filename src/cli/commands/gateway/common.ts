/**
 * @module Shared pieces of the key commands: the `--keystore` / `--db-path` / `--database-url` flags, where
 * the keys live (keys.json, or the gateway_keys table when the store is PostgreSQL) and the audit sink
 * that records lifecycle events in the trace store when it is reachable, and otherwise warns (exit 0).
 */
import { readEnv, type SvcEnv } from '../../../config/env.ts';
import {
  DEFAULT_DB_PATH_HELP,
  resolveKeystorePath,
  resolveStoreTarget,
  type StoreFlags,
} from '../../../config/paths.ts';
import { createEnvelope, type EventInput } from '../../../events/envelope.ts';
import { createTraceWriter } from '../../../events/trace-writer.ts';
import type { AuditSink, KeyAdminDeps } from '../../../gateway/key-admin.ts';
import { updateKeystoreFile } from '../../../gateway/keystore/file.ts';
import { updateKeyTable } from '../../../gateway/keystore/table.ts';
import { errorMessage, SvcError } from '../../../lib/errors.ts';
import { createIdFactory } from '../../../lib/ids.ts';
import { createLogger, type Logger } from '../../../lib/log.ts';
import { systemClock } from '../../../lib/time.ts';
import { openStore, type Store } from '../../../store/open.ts';
import { databaseUrlArg, storeFlagsOf } from '../../store-flags.ts';

export const keystoreArgs = {
  keystore: {
    type: 'string',
    description:
      'Keystore file (default SVC_GATEWAY_KEYSTORE, else ~/.config/svc/keys.json; not with PostgreSQL)',
  },
  'db-path': {
    type: 'string',
    description: `Trace store for the audit events (default SVC_GATEWAY_DB_PATH, then SVC_DB_PATH, else ${DEFAULT_DB_PATH_HELP})`,
  },
  ...databaseUrlArg,
} as const;

export interface KeystoreArgs {
  keystore?: string;
  'db-path'?: string;
  'database-url'?: string;
}

/**
 * Runs `fn` with the key operations' dependencies: on a SQLite deployment the keystore file, with audit
 * events sent to the trace store when it is reachable; on PostgreSQL the gateway_keys table and the
 * events of the same database (which must be reachable: the keys live there).
 */
export async function withKeyAdmin<T>(
  args: KeystoreArgs,
  fn: (deps: KeyAdminDeps) => Promise<T>,
): Promise<T> {
  const env = readEnv();
  const flags = storeFlagsOf(args);
  const target = resolveStoreTarget(env, flags, 'gateway');
  const base = { newId: createIdFactory(), clock: systemClock };
  if (target.engine === 'sqlite') {
    const path = resolveKeystorePath(env, args.keystore);
    return fn({
      ...base,
      updateKeystore: (c) => updateKeystoreFile(path, c),
      audit: createAuditSink(env, flags),
      keystorePath: path,
      warn: (message) => process.stderr.write(`svc: warning: ${message}\n`),
    });
  }
  assertNoKeystoreFlag(args);
  const store = await openStore(target, { log: createLogger({ level: 'warn' }) });
  try {
    if (store.engine !== 'postgres') throw new Error('unreachable: the target is PostgreSQL');
    return await fn({ ...base, updateKeystore: (c) => updateKeyTable(store, c), audit: auditInto(store) });
  } finally {
    await store.close();
  }
}

/** `--keystore` names a file, but with PostgreSQL the keys live in the database: say so (exit 2). */
export function assertNoKeystoreFlag(args: KeystoreArgs): void {
  if (args.keystore === undefined) return;
  throw new SvcError('usage_error', {
    message:
      'With PostgreSQL (SVC_DATABASE_URL / --database-url) the gateway keys live in the database, not in a keystore file; drop --keystore.',
  });
}

/** The KEY_ID positional: an empty one (an unset shell variable) is a missing argument, exit 2. */
export function keyIdArg(value: string): string {
  if (value.trim() === '') {
    throw new SvcError('usage_error', {
      message: 'KEY_ID must not be empty: give the key id (gk_…) that `svc gateway list-keys` shows.',
    });
  }
  return value;
}

/** Prints `label: value` lines, the operator commands' output format (spec 1 §Operator commands). */
export function printLines(lines: Array<[string, string | null | undefined]>): void {
  process.stdout.write(lines.map(([k, v]) => `${k}: ${v ?? ''}\n`).join(''));
}

/**
 * Prints lines holding a token, which is shown once and never stored: when standard output cannot take
 * them (a full disk, a reader gone), the key exists but no one has its token, so the command fails with
 * `lost` (what to do about that key, given the write's error code) rather than the generic sentence
 * asking to run it again, which would issue one more key.
 */
export async function printTokenLines(
  lines: Array<[string, string | null | undefined]>,
  lost: (code: string) => string,
): Promise<void> {
  const text = lines.map(([k, v]) => `${k}: ${v ?? ''}\n`).join('');
  const failed = await new Promise<Error | null | undefined>((done) => process.stdout.write(text, done));
  if (!failed) return;
  const code = (failed as NodeJS.ErrnoException).code ?? errorMessage(failed);
  throw new SvcError('io_error', { message: lost(code), cause: failed });
}

// --- internal ---

function createAuditSink(env: SvcEnv, flags: StoreFlags): AuditSink {
  return async (events: EventInput[]) => {
    if (events.length === 0) return;
    const target = resolveStoreTarget(env, flags, 'gateway');
    const path = target.engine === 'sqlite' ? target.path : 'PostgreSQL';
    const types = [...new Set(events.map((e) => e.type))].join(', ');
    const warn = (why: string) =>
      process.stderr.write(
        `svc: warning: the audit event ${types} was not recorded because the trace store ${path} ${why}; the keystore change itself is done.\n`,
      );
    let store: Store;
    try {
      store = await openStore(target, { log: createLogger({ level: 'warn' }) });
    } catch (err) {
      warn(`is not reachable (${errorMessage(err)})`);
      return;
    }
    const failure = await writeAudit(store, events);
    await store.close();
    if (failure !== undefined) warn(`refused the write (${failure})`);
  };
}

/** Audit events into the store that holds the keys; a failed write fails the command (exit 1). */
function auditInto(store: Store): AuditSink {
  return async (events) => {
    if (events.length === 0) return;
    const failure = await writeAudit(store, events);
    if (failure !== undefined) {
      throw new SvcError('store_error', {
        message: `The key change is done, but its audit event could not be written to ${store.path} (${failure}); check the database and look for the change with svc gateway list-keys.`,
      });
    }
  };
}

/**
 * The writer directly, not the bus: a one-shot command has no other subscriber to announce. Undefined when
 * every event was stored, else why not: the writer's own words, which the command's one sentence carries
 * (its JSON log line is for servers, not a terminal).
 */
async function writeAudit(store: Store, events: EventInput[]): Promise<string | undefined> {
  let failure: string | undefined;
  const note = (msg: string, fields?: Record<string, unknown>) => {
    failure ??= typeof fields?.message === 'string' ? fields.message : msg;
  };
  const log: Logger = { debug: () => {}, info: () => {}, warn: note, error: note, child: () => log };
  const writer = createTraceWriter({ store, log, maxAttempts: 3 });
  const newId = createIdFactory();
  const results = await Promise.all(
    events.map((e) => writer.write(createEnvelope(e, { newId, clock: systemClock }))),
  );
  await writer.stop();
  return results.includes(false) ? (failure ?? 'the write failed') : undefined;
}
