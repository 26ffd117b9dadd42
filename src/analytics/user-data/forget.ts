/**
 * @module Per-user forget (spec 3 §POST /analytics/user/{user_id}/forget): the default redaction
 * policy rewrites the user id in place to its pseudonym wherever USER_ID_LOCATIONS says it can live,
 * deletes no row, then scrubs the store file so no stale copy of the id survives in free space or the
 * WAL. Idempotent: a repeat rewrites zero rows; every call emits `analytics.user_forgotten`, stored in
 * the rewrite's transaction. A store that fails PRAGMA integrity_check is refused before anything changes.
 */
import { type RawBuilder, sql } from 'kysely';
import type { Bus } from '../../events/bus.ts';
import type { Actor, EventType } from '../../events/catalog.ts';
import { toRow } from '../../events/trace-writer.ts';
import { type Clock, formatUs } from '../../lib/time.ts';
import type { SqlDialect } from '../../store/dialect.ts';
import { assertStoreIntact } from '../../store/integrity.ts';
import type { Store } from '../../store/open.ts';
import { scrubStore } from '../../store/scrub.ts';
import { assertUserId } from '../identity.ts';
import { loadForgetSalt, lockForget, pseudonymFor, readForgetSalt } from './pseudonym.ts';

export interface UserIdLocation {
  /** JSON path of the id inside `events.payload`. */
  readonly path: string;
  /** Only events of these types carry it there; every type when absent. */
  readonly types?: readonly EventType[];
  /** Only where this other payload field holds this value. */
  readonly when?: { readonly path: string; readonly equals: string };
}

/**
 * Every place a user id can live in the store (STYLE rule 11; a test writes the id into each and reads
 * the raw file back). The generated `user_id` column and its index follow `$.user_id` by themselves.
 * Sessions, messages and tool calls carry no user id column; free text is not searched.
 */
export const USER_ID_LOCATIONS: readonly UserIdLocation[] = [
  { path: '$.user_id' },
  {
    path: '$.identity_id',
    types: ['quota.alert', 'gateway.quota_exceeded'],
    when: { path: '$.identity_kind', equals: 'user' },
  },
];

export interface ForgetUserDeps {
  store: Store;
  /** The audit event is stamped by the bus, stored with the rewrite, then delivered. */
  bus: Pick<Bus, 'stamp' | 'deliverStored'>;
  clock: Clock;
  actor?: Actor;
  /** VACUUM and truncate the WAL afterwards (default true); see store/scrub.ts for its cost. */
  scrub?: boolean;
}

export interface ForgetUserResult {
  readonly user_id: string;
  readonly pseudonym: string;
  readonly pseudonymized_rows: number;
  readonly completed_at: string;
  /** Whether the WAL was emptied (null when the scrub was not asked for). */
  readonly walTruncated: boolean | null;
  readonly auditEventId: string;
}

/**
 * Refuses a damaged store before changing anything, then rewrites the id to its pseudonym and stores the
 * audit event in one write transaction (both or neither), then scrubs the file.
 */
export async function runForgetUser(deps: ForgetUserDeps, userId: string): Promise<ForgetUserResult> {
  const id = assertUserId(userId);
  const { dialect } = deps.store;
  await assertStoreIntact(deps.store, 'nothing was changed');
  const event = await deps.store.kysely.transaction().execute(async (trx) => {
    await lockForget(trx, dialect.engine);
    const salt = await loadForgetSalt(trx);
    const pseudonym = pseudonymFor(salt, id);
    const rows = await countMatches(trx, dialect, id);
    for (const location of USER_ID_LOCATIONS) {
      const match = matchLocation(dialect, location, id);
      if (dialect.engine === 'postgres') await rewriteRowsHoldingNul(trx, match, location.path, pseudonym);
      const rewritten = dialect.jsonSetString(sql.ref('payload'), location.path, pseudonym);
      await sql`UPDATE events SET payload = ${rewritten} WHERE ${match}`.execute(trx);
    }
    const completedAt = formatUs(deps.clock.nowUs());
    const audit = deps.bus.stamp({
      type: 'analytics.user_forgotten',
      actor: deps.actor ?? 'operator',
      payload: { user_id: pseudonym, pseudonym, pseudonymized_rows: rows, completed_at: completedAt },
    });
    await trx.insertInto('events').values(toRow(audit)).execute();
    return audit;
  });
  deps.bus.deliverStored(event);
  const scrub = deps.scrub === false ? null : await scrubStore(deps.store);
  return {
    user_id: id,
    pseudonym: event.payload.pseudonym,
    pseudonymized_rows: event.payload.pseudonymized_rows,
    completed_at: event.payload.completed_at,
    walTruncated: scrub ? scrub.walTruncated : null,
    auditEventId: event.id,
  };
}

export interface ForgetPreview {
  readonly user_id: string;
  /** Null when the store has no salt yet (a store opened read-only before migration 0002). */
  readonly pseudonym: string | null;
  readonly rows: number;
}

/** What runForgetUser would rewrite now; reads only. */
export async function previewForgetUser(store: Store, userId: string): Promise<ForgetPreview> {
  const id = assertUserId(userId);
  const salt = await readForgetSalt(store.kysely);
  return {
    user_id: id,
    pseudonym: salt === undefined ? null : pseudonymFor(salt, id),
    rows: await countMatches(store.kysely, store.dialect, id),
  };
}

// --- internal ---

type Executor = Store['kysely'];

/** Distinct rows holding the id in any location (a row may hold it in several). */
async function countMatches(db: Executor, dialect: SqlDialect, id: string): Promise<number> {
  const any = sql.join(
    USER_ID_LOCATIONS.map((l) => sql`(${matchLocation(dialect, l, id)})`),
    sql` OR `,
  );
  const r = await sql<{ n: number }>`SELECT count(*) AS n FROM events WHERE ${any}`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/**
 * SQL condition for "this row holds `id` at `location`"; `$.user_id` goes through its indexed column. On
 * SQLite a typed location's path and types are written as literals, so the partial expression index of
 * migration 0006 (`events_quota_identity`) matches them; they are constants of USER_ID_LOCATIONS.
 */
function matchLocation(dialect: SqlDialect, location: UserIdLocation, id: string): RawBuilder<unknown> {
  const payload = sql.ref('payload');
  const literal = dialect.engine === 'sqlite' && location.types !== undefined;
  const parts: RawBuilder<unknown>[] = [
    location.path === '$.user_id'
      ? sql`user_id = ${id}`
      : literal
        ? sql`json_extract(payload, ${sql.lit(location.path)}) = ${id}`
        : sql`${dialect.jsonText(payload, location.path)} = ${id}`,
  ];
  if (location.types)
    parts.push(sql`type IN (${sql.join(location.types.map((t) => (literal ? sql.lit(t) : sql`${t}`)))})`);
  if (location.when)
    parts.push(sql`${dialect.jsonText(payload, location.when.path)} = ${location.when.equals}`);
  return sql.join(parts, sql` AND `);
}

/**
 * PostgreSQL's jsonb cannot hold the escape \u0000 (a provider's error message may carry it): jsonb_set
 * would store the rows its reads see, with U+FFFD in its place (and in a text `\\u0000`), changing what
 * the user's events say. Such rows are rewritten here instead, the JSON parsed and written back as svc
 * wrote it (key order kept), in pages: a rewritten row no longer matches.
 */
async function rewriteRowsHoldingNul(
  trx: Executor,
  match: RawBuilder<unknown>,
  path: string,
  value: string,
): Promise<void> {
  const key = /^\$\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(path)?.[1];
  if (key === undefined) throw new Error(`not a top-level JSON path: ${path}`);
  for (;;) {
    const page = await sql<{ id: string; payload: string }>`SELECT id, payload FROM events
      WHERE ${match} AND strpos(payload, ${String.raw`\u0000`}) > 0 ORDER BY id LIMIT 500`.execute(trx);
    for (const row of page.rows) {
      const payload = JSON.parse(row.payload) as Record<string, unknown>;
      payload[key] = value;
      await sql`UPDATE events SET payload = ${JSON.stringify(payload)} WHERE id = ${row.id}`.execute(trx);
    }
    if (page.rows.length < 500) return;
  }
}
