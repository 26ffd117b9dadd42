/**
 * @module Shared pieces of the key commands: the `--keystore` / `--db-path` flags and the audit sink that
 * records lifecycle events in the trace store when it is reachable, and otherwise warns (exit stays 0).
 */
import { readEnv, type SvcEnv } from '../../../config/env.ts';
import { resolveKeystorePath, resolveStoreTarget, type StoreFlags } from '../../../config/paths.ts';
import { createEnvelope, type EventInput } from '../../../events/envelope.ts';
import { createTraceWriter } from '../../../events/trace-writer.ts';
import type { AuditSink, KeyAdminDeps } from '../../../gateway/index.ts';
import { errorMessage } from '../../../lib/errors.ts';
import { createIdFactory } from '../../../lib/ids.ts';
import { createLogger } from '../../../lib/log.ts';
import { systemClock } from '../../../lib/time.ts';
import { openStore } from '../../../store/open.ts';
import { databaseUrlArg, storeFlagsOf } from '../../store-flags.ts';

export const keystoreArgs = {
  keystore: {
    type: 'string',
    description: 'Keystore file (default SVC_GATEWAY_KEYSTORE, else ~/.config/svc/keys.json)',
  },
  'db-path': {
    type: 'string',
    description: 'Trace store for the audit events (default SVC_GATEWAY_DB_PATH / SVC_DB_PATH)',
  },
  ...databaseUrlArg,
} as const;

/** Dependencies of the key operations, built from the flags and the environment. */
export function createKeyAdminDeps(args: {
  keystore?: string;
  'db-path'?: string;
  'database-url'?: string;
}): KeyAdminDeps {
  const env = readEnv();
  const newId = createIdFactory();
  return {
    keystorePath: resolveKeystorePath(env, args.keystore),
    newId,
    clock: systemClock,
    audit: createAuditSink(env, storeFlagsOf(args)),
  };
}

/** Prints `label: value` lines, the operator commands' output format (spec 1 §Operator commands). */
export function printLines(lines: Array<[string, string | null | undefined]>): void {
  process.stdout.write(lines.map(([k, v]) => `${k}: ${v ?? ''}\n`).join(''));
}

// --- internal ---

function createAuditSink(env: SvcEnv, flags: StoreFlags): AuditSink {
  return async (events: EventInput[]) => {
    if (events.length === 0) return;
    const target = resolveStoreTarget(env, flags, 'gateway');
    const path = target.engine === 'sqlite' ? target.path : 'PostgreSQL';
    const types = [...new Set(events.map((e) => e.type))].join(', ');
    const warn = (reason: string) =>
      process.stderr.write(
        `svc: warning: the audit event ${types} was not recorded because the trace store ${path} is not reachable (${reason}); the keystore change itself is done.\n`,
      );
    let store: Awaited<ReturnType<typeof openStore>>;
    try {
      store = await openStore(target, { log: createLogger({ level: 'warn' }) });
    } catch (err) {
      warn(errorMessage(err));
      return;
    }
    // The writer directly, not the bus: a one-shot command has no other subscriber to announce.
    const writer = createTraceWriter({ store, log: createLogger({ level: 'error' }), maxAttempts: 3 });
    const newId = createIdFactory();
    const results = await Promise.all(
      events.map((e) => writer.write(createEnvelope(e, { newId, clock: systemClock }))),
    );
    await writer.stop();
    await store.close();
    if (results.includes(false)) warn('the write failed');
  };
}
