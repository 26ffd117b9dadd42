/**
 * @module The one place where SQLite and PostgreSQL differ in what queries say: JSON access, exact decimal
 * sums, JSON rewrites, the statement that opens a write transaction, the group-commit INSERT, advisory
 * locks and which failures are worth retrying. Queries elsewhere stay typed Kysely and call these for the
 * fragments that differ; each engine's DDL lives in its own frozen migrations.
 */
import type { StatementSync } from 'node:sqlite';
import { type Kysely, PostgresAdapter, type RawBuilder, sql } from 'kysely';
import { COST_TEXT_PATTERN } from '../lib/decimal.ts';
import { errorMessage } from '../lib/errors.ts';
import type { NewEventRow } from './schema.ts';
import { SQLITE, sqliteCode } from './sqlite-errors.ts';

export const ENGINES = ['sqlite', 'postgres'] as const;
export type EngineName = (typeof ENGINES)[number];

export interface SqlDialect {
  readonly engine: EngineName;
  /** The value at a JSON path (`$.a`, `$.chain[0].policy`) of JSON text, as text; null when absent. */
  jsonText(json: RawBuilder<unknown>, path: string): RawBuilder<string | null>;
  /** JSON text with the string `value` stored at `path` (a key path, no array steps). */
  jsonSetString(json: RawBuilder<unknown>, path: string, value: string): RawBuilder<string>;
  /** Exact sum of decimal strings (or JSON numbers) as decimal text; '0' or '0.000000' when no row. */
  decimalSum(expr: RawBuilder<unknown>): RawBuilder<string>;
  /** Lock contention or a lost connection: the same statement may succeed when tried again. */
  isRetryable(err: unknown): boolean;
  /** One statement text that appends a batch of events, and its parameters. */
  readonly insertEvent: string;
  /**
   * The same, skipping rows whose id is already stored: the retry of an append whose outcome was never
   * heard (the connection dropped after the commit), so its rows are neither refused nor written twice.
   */
  readonly insertEventIfAbsent: string;
}

/** `INSERT INTO events` column order shared by both engines' append statements. */
export const EVENT_COLUMNS = [
  'id',
  'timestamp',
  'timestamp_us',
  'session_id',
  'turn_id',
  'type',
  'actor',
  'payload',
  'parent_event_id',
  'sensitivity',
] as const;

/** One event row's values in EVENT_COLUMNS order. */
export function eventValues(r: NewEventRow): unknown[] {
  return [
    r.id,
    r.timestamp,
    r.timestamp_us,
    r.session_id ?? null,
    r.turn_id ?? null,
    r.type,
    r.actor,
    r.payload,
    r.parent_event_id ?? null,
    r.sensitivity,
  ];
}

/**
 * Runs a prepared SQLite INSERT of EVENT_COLUMNS (sqliteDialect.insertEvent) with one row's values, in
 * that order, as arguments: per row no array of values and no spread call, as eventValues would need.
 */
export function runEventInsert(insert: StatementSync, r: NewEventRow): void {
  insert.run(
    r.id,
    r.timestamp,
    r.timestamp_us,
    r.session_id ?? null,
    r.turn_id ?? null,
    r.type,
    r.actor,
    r.payload,
    r.parent_event_id ?? null,
    r.sensitivity,
  );
}

const SQLITE_INSERT_EVENT = `INSERT INTO events (${EVENT_COLUMNS.join(', ')}) VALUES (${EVENT_COLUMNS.map(() => '?').join(', ')})`;

export const sqliteDialect: SqlDialect = {
  engine: 'sqlite',
  jsonText: (json, path) => sql<string | null>`json_extract(${json}, ${path})`,
  jsonSetString: (json, path, value) => sql<string>`json_set(${json}, ${path}, ${value})`,
  // decimal_sum is registered on every connection by open.ts (exact, BigInt-backed)
  decimalSum: (expr) => sql<string>`decimal_sum(${expr})`,
  isRetryable(err) {
    const code = sqliteCode(err); // extended codes included
    if (code !== undefined) return code === SQLITE.BUSY || code === SQLITE.LOCKED;
    return /database is (locked|busy)/i.test(errorMessage(err));
  },
  insertEvent: SQLITE_INSERT_EVENT,
  insertEventIfAbsent: `${SQLITE_INSERT_EVENT} ON CONFLICT (id) DO NOTHING`,
};

/**
 * How long background writes to PostgreSQL (the trace writer's batches, budget settlements) keep being
 * retried, about once a second once their quick attempts have failed, when the server is unreachable:
 * a restart or a failover loses none of them. Counted from the first failure.
 */
export const POSTGRES_OUTAGE_MS = 60_000;

const POSTGRES_INSERT_EVENT = `INSERT INTO events (${EVENT_COLUMNS.join(', ')}) SELECT * FROM unnest(${EVENT_COLUMNS.map(
  (c, i) => `$${i + 1}::${c === 'timestamp_us' ? 'int8' : 'text'}[]`,
).join(', ')})`;

export const postgresDialect: SqlDialect = {
  engine: 'postgres',
  // PostgreSQL refuses to extract anything from JSON holding the escape \u0000: read it as \ufffd
  jsonText: (json, path) => sql<string | null>`(${pgJson(json)}::json #>> ${toPgPath(path)})`,
  jsonSetString: (json, path, value) =>
    sql<string>`jsonb_set(${pgJson(json)}::jsonb, ${toPgPath(path)}, to_jsonb(${value}::text))::text`,
  decimalSum: (expr) => sql<string>`coalesce(sum(${pgCostNumeric(expr)}), 0)::text`,
  isRetryable(err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code === 'string') return RETRYABLE_PG_CODES.test(code) || NODE_NET_CODES.has(code);
    // node-postgres' own errors: a lost socket, a statement sent on a client that lost it (checked out),
    // and a statement not answered within its bound (a paused server, a black-holed network)
    return /Connection terminated|connection timeout|timeout exceeded when trying to connect|connection error and is not queryable|Query read timeout/i.test(
      errorMessage(err),
    );
  },
  // one statement for a whole batch whatever its size, so the server prepares it once per connection
  insertEvent: POSTGRES_INSERT_EVENT,
  insertEventIfAbsent: `${POSTGRES_INSERT_EVENT} ON CONFLICT (id) DO NOTHING`,
};

/**
 * A stored cost (text) as PostgreSQL NUMERIC, NULL when it is no number (readCost's rule on SQLite), so a
 * sum leaves it out instead of failing on the cast.
 */
export function pgCostNumeric(expr: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`CASE WHEN (${expr}) ~ ${COST_TEXT_PATTERN} THEN (${expr})::numeric END`;
}

export function dialectOf(engine: EngineName): SqlDialect {
  return engine === 'sqlite' ? sqliteDialect : postgresDialect;
}

/**
 * The store could not be reached at all (PostgreSQL restarting, failed over, refusing connections, or the
 * connection lost mid-statement), as opposed to a statement it refused or lock contention: a request that
 * met it is answered 503 store_unavailable, and work already accepted waits for the store to come back.
 * Connection exceptions (08…), a server shutting down or starting (57P01–57P03), too many connections
 * (53300), a server that takes no writes (25006: a failover's demoted primary), the socket's own errors, node-postgres' lost-connection messages and a statement or connection
 * attempt that went unanswered past its bound (a server that hangs). SQLite is a local file: never.
 */
export function isStoreUnreachable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return UNREACHABLE_PG_CODES.test(code) || NODE_NET_CODES.has(code);
  // node-postgres' own errors: a lost socket, a connect that timed out, a client that lost its connection,
  // a statement not answered within its bound (statement-bounds.ts: a paused server, a black-holed network)
  return (
    err instanceof Error &&
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|connection error and is not queryable|Client has encountered a connection error|Query read timeout/i.test(
      err.message,
    )
  );
}

/**
 * The command line's sentence for a store that stopped answering mid-command (the start's own connection
 * failure is said by openStore): what failed and that running the command again is safe once it is back (a
 * report only reads; forget rewrites and audits in one transaction, and a repeat of one whose commit went
 * unheard rewrites nothing more).
 * Undefined when `err` is not such a failure.
 */
export function describeUnreachableStore(err: unknown): string | undefined {
  if (!isStoreUnreachable(err)) return undefined;
  return `The PostgreSQL store stopped answering (${errorMessage(err)}); run the command again once the database is back (reports and exports only read, and forget changes all or nothing, so a repeat is safe).`;
}

/** The engine a store's Kysely talks to (for query modules handed only the Kysely). */
export function engineOfKysely(db: Pick<Kysely<never>, 'getExecutor'>): EngineName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * PostgreSQL advisory lock keys, each two int4 halves. Transaction-scoped ('svc', purpose): migrations,
 * key updates, and a forget against an export's audit record (user-data/pseudonym.ts). Session-scoped presence: ('svp', hashtext(origin)), held by a live process; and the
 * agent server's ('svc', 4), held by the one `svc serve` of the database (postgres-session.ts).
 */
export const ADVISORY_LOCKS = {
  migrate: [0x737663, 1],
  keys: [0x737663, 2],
  gaps: [0x737663, 3],
  presence: 0x737670,
  serve: [0x737663, 4],
  forget: [0x737663, 5],
} as const;

/** events.origin of `alias` (PostgreSQL: the process that wrote the row); NULL on SQLite. */
export function eventOrigin(dialect: SqlDialect, alias: string): RawBuilder<string | null> {
  return dialect.engine === 'postgres' ? sql<string | null>`${sql.ref(`${alias}.origin`)}` : sql<null>`NULL`;
}

// --- internal ---

/** 40001 serialization failure, 40P01 deadlock, 55P03 lock not available, 08* connection, 57P0* shutdown. */
// serialization failure, deadlock, lock not available, connection exceptions, too many connections,
// admin/crash shutdown and cannot connect now (a restarting server), and 25006 read-only transaction: a
// failover's demoted primary still reached through a name that now means the new one (the connection is
// dropped, statement-bounds.ts, so a retry connects anew); not an outage to commands (postgres-refusals.ts)
const RETRYABLE_PG_CODES = /^(40001|40P01|55P03|08...|53300|57P0[1-3]|25006)$/;
// a read-only server (25006) is a failover under way to servers: svc serve answers 503 and turns wait
const UNREACHABLE_PG_CODES = /^(08...|53300|57P0[1-3]|25006)$/;
const NODE_NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN']);

function pgJson(json: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`replace(${json}, ${NUL_ESCAPE}, ${REPLACEMENT_ESCAPE})`;
}

const NUL_ESCAPE = String.raw`\u0000`;
const REPLACEMENT_ESCAPE = String.raw`\ufffd`;

/** `$.a.b[2].c` → PostgreSQL's text[] path `{a,b,2,c}`. */
function toPgPath(path: string): string[] {
  if (!path.startsWith('$')) throw new Error(`JSON path must start with $: ${path}`);
  const steps: string[] = [];
  for (const m of path.slice(1).matchAll(/\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]/g)) steps.push(m[1] ?? m[2]);
  return steps;
}
