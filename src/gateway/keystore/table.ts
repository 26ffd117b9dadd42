/**
 * @module Gateway keys in the PostgreSQL table `gateway_keys` (replicas share them; SQLite deployments
 * keep keys.json, file.ts). Updates are the same read-modify-write of the whole keystore document as the
 * file's, serialised across processes by a transaction-scoped advisory lock, and announced with
 * NOTIFY. Each gateway keeps every record in memory: a NOTIFY reloads it at once, and a 1 s poll of the
 * highest row version catches anything a lost LISTEN connection missed. Auth reads only memory.
 */
import { type Kysely, sql } from 'kysely';
import { errorMessage } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { ADVISORY_LOCKS } from '../../store/dialect.ts';
import type { PostgresStore } from '../../store/open.ts';
import type { Database, GatewayKeyRow } from '../../store/schema.ts';
import type { KeystoreCache, KeystoreChange } from './file.ts';
import { decodeKeystore, type KeyRecord, KeyRecordSchema, type Keystore } from './keystore.ts';

/** NOTIFY channel of every change to gateway_keys. */
export const KEYS_CHANNEL = 'svc_gateway_keys';
/** How often a gateway checks the keys' version when no NOTIFY came. */
export const KEYS_POLL_MS = 1_000;

/**
 * Read-modify-write of the keys under the keys' advisory lock, in one transaction; changed and new
 * records are written and NOTIFY tells every gateway. `change` sees undefined when there is no key yet.
 */
export async function updateKeyTable<T>(
  store: PostgresStore,
  change: (current: Keystore | undefined) => KeystoreChange<T>,
): Promise<T> {
  const [a, b] = ADVISORY_LOCKS.keys;
  return store.kysely.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${sql.lit(a)}, ${sql.lit(b)})`.execute(trx);
    const current = await readKeyTable(trx, store.path);
    const { next, result } = change(current.keys.length ? current : undefined);
    if (!next) return result;
    const before = new Map(current.keys.map((k) => [k.key_id, JSON.stringify(k)]));
    const changed = next.keys.filter((k) => before.get(k.key_id) !== JSON.stringify(k));
    for (const k of changed) {
      const row = toRow(k);
      await trx
        .insertInto('gateway_keys')
        .values(row)
        .onConflict((oc) =>
          oc.column('key_id').doUpdateSet({ ...row, version: sql<number>`nextval('gateway_keys_version')` }),
        )
        .execute();
    }
    if (changed.length) await sql`SELECT pg_notify(${KEYS_CHANNEL}, '')`.execute(trx);
    return result;
  });
}

/** Every key, in issue order; throws keystore_invalid when a row does not make a valid record. */
export async function readKeyTable(db: Kysely<Database>, label: string): Promise<Keystore> {
  const rows = await db.selectFrom('gateway_keys').selectAll().orderBy('key_id').execute();
  const decoded = decodeKeystore({ keys: rows.map(fromRow) });
  if (!decoded.ok) {
    throw new Error(
      `the gateway_keys table of ${label} holds a record that is not valid (${decoded.reason})`,
    );
  }
  return decoded.value;
}

export interface KeyTableCache extends KeystoreCache {
  /** Every record (the key gauges). */
  records(): readonly KeyRecord[];
  /** Resolves after the next reload that found a change (tests). */
  _changed(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Loads every key now (throws when the table cannot be read), then keeps them current: NOTIFY reloads,
 * and a poll every `pollMs` reloads when the highest version moved. A table that turns unreadable keeps
 * the last good keys and logs the reason once.
 */
export async function createKeyTableCache(
  store: PostgresStore,
  options: { log: Logger; pollMs?: number; listen?: boolean },
): Promise<KeyTableCache> {
  const { log } = options;
  let keys = await readKeyTable(store.kysely, store.path);
  let byHash = index(keys);
  let version = await maxVersion(store.kysely);
  let lastError: string | undefined;
  let reloading: Promise<void> | undefined;
  let again = false;
  let waiters: Array<() => void> = [];

  const reload = async (): Promise<void> => {
    const seen = await maxVersion(store.kysely);
    if (seen === version) return;
    keys = await readKeyTable(store.kysely, store.path);
    byHash = index(keys);
    version = seen;
    for (const w of waiters.splice(0)) w();
  };
  const trigger = () => {
    if (reloading) {
      again = true; // a change committed while reading: read once more
      return;
    }
    reloading = reload()
      .then(() => {
        lastError = undefined;
      })
      .catch((err) => {
        const reason = errorMessage(err);
        if (reason !== lastError)
          log.error('gateway keys reload failed; keeping the last good keys', { reason });
        lastError = reason;
      })
      .finally(() => {
        reloading = undefined;
        if (again) {
          again = false;
          trigger();
        }
      });
  };
  const stopListening =
    options.listen === false
      ? undefined
      : await store.listen(KEYS_CHANNEL, { onNotify: trigger, onReconnect: trigger });
  const timer = setInterval(trigger, options.pollMs ?? KEYS_POLL_MS);
  timer.unref();
  return {
    refresh() {}, // kept current by NOTIFY and the poll; a request reads memory only
    lookup: (secretHash) => byHash.get(secretHash),
    get size() {
      return byHash.size;
    },
    records: () => keys.keys,
    _changed: () =>
      new Promise<void>((resolve) => {
        waiters = [...waiters, resolve];
      }),
    async close() {
      clearInterval(timer);
      await stopListening?.();
      await reloading;
    },
  };
}

// --- internal ---

/** The record fields with a column of their own (KeyRecordSchema); budget_key_id and unknown fields go in `extra`. */
const COLUMNS: ReadonlySet<string> = new Set(
  Object.keys(KeyRecordSchema.entries).filter((name) => name !== 'budget_key_id'),
);

async function maxVersion(db: Kysely<Database>): Promise<number> {
  const r = await db
    .selectFrom('gateway_keys')
    .select((eb) => eb.fn.max('version').as('v'))
    .executeTakeFirst();
  return Number(r?.v ?? 0);
}

function index(store: Keystore): Map<string, KeyRecord> {
  return new Map(store.keys.map((k) => [k.secret_hash, k]));
}

function toRow(k: KeyRecord): Omit<GatewayKeyRow, 'version'> {
  const extra = Object.fromEntries(Object.entries(k).filter(([name]) => !COLUMNS.has(name)));
  return {
    key_id: k.key_id,
    secret_hash: k.secret_hash,
    name: k.name,
    workspace_path: k.workspace_path,
    allowed_models: k.allowed_models ? JSON.stringify(k.allowed_models) : null,
    daily_cap_usd: k.daily_cap_usd ?? null,
    monthly_cap_usd: k.monthly_cap_usd ?? null,
    user_id: k.user_id ?? null,
    team_id: k.team_id ?? null,
    status: k.status,
    revoked_at: k.revoked_at ?? null,
    grace_period_until: k.grace_period_until ?? null,
    created_at: k.created_at,
    extra: JSON.stringify(extra),
  };
}

/** A row as the record keys.json would hold: absent optional fields are left out, not null. */
function fromRow(row: GatewayKeyRow): Record<string, unknown> {
  const record: Record<string, unknown> = { ...(JSON.parse(row.extra) as Record<string, unknown>) };
  for (const [name, value] of Object.entries(row)) {
    if (!COLUMNS.has(name) || value === null) continue;
    record[name] = name === 'allowed_models' ? JSON.parse(value as string) : value;
  }
  return record;
}
