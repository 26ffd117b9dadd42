/**
 * @module Where a running gateway reads its keys: the keystore file (SQLite deployments) or the
 * gateway_keys table (PostgreSQL, shared by every replica), behind one face for auth and the key gauges,
 * with spec 1's start-up refusal when there is no key to authenticate with.
 */
import { SvcError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import type { Store } from '../../store/open.ts';
import { createKeystoreCache, type KeystoreCache, readKeystoreFile } from './file.ts';
import type { KeyRecord } from './keystore.ts';
import { createKeyTableCache } from './table.ts';

export type KeysLocation = { kind: 'file'; path: string } | { kind: 'table' };

export interface GatewayKeys {
  readonly cache: KeystoreCache;
  /** Every record now, for the scrape-time key gauges; throws when they cannot be read. */
  records(): readonly KeyRecord[];
  /** For the start-up log line. */
  readonly location: string;
  close(): Promise<void>;
}

/** The keystore file; refuses the start (startup_refused) when it is missing or holds no key. */
export function openFileKeys(path: string, log: Logger): GatewayKeys {
  const store = readKeystoreFile(path);
  const issue = `issue one with \`svc gateway issue-key --name <name> --workspace <dir> --keystore ${path}\``;
  if (!store) {
    throw new SvcError('startup_refused', {
      message: `The gateway refuses to start because there is no keystore at ${path}; ${issue} (or set SVC_GATEWAY_KEYSTORE / --keystore), then start it again.`,
    });
  }
  if (store.keys.length === 0) {
    throw new SvcError('startup_refused', {
      message: `The gateway refuses to start because the keystore ${path} has no keys; ${issue}, then start it again.`,
    });
  }
  return {
    cache: createKeystoreCache(path, { log }),
    // re-read at scrape time, so an issue or revoke shows without a request
    records: () => readKeystoreFile(path)?.keys ?? [],
    location: path,
    close: async () => {},
  };
}

/** The gateway_keys table of a PostgreSQL store; refuses the start when it holds no key. */
export async function openTableKeys(store: Store, log: Logger): Promise<GatewayKeys> {
  if (store.engine !== 'postgres') throw new Error('gateway keys live in a table only on PostgreSQL');
  const cache = await createKeyTableCache(store, { log });
  if (cache.size === 0) {
    await cache.close();
    throw new SvcError('startup_refused', {
      message: `The gateway refuses to start because the gateway_keys table of ${store.path} has no keys; issue one with \`svc gateway issue-key --name <name> --workspace <dir>\` and SVC_DATABASE_URL set, then start it again.`,
    });
  }
  return { cache, records: cache.records, location: `gateway_keys of ${store.path}`, close: cache.close };
}
