/**
 * @module Per-user export (spec 3 §GET /analytics/user/{user_id}/export): every event whose payload
 * `user_id` equals the id, any type, ascending id, one JSON object per line. Rows are read in keyset
 * pages over the `events_user (user_id, id)` index, so memory stays constant however many rows match.
 */
import { Buffer } from 'node:buffer';
import type { Kysely } from 'kysely';
import type { Bus } from '../../events/bus.ts';
import type { Actor } from '../../events/catalog.ts';
import { toRow } from '../../events/trace-writer.ts';
import type { Store } from '../../store/open.ts';
import type { Database, EventRow } from '../../store/schema.ts';
import { assertUserId } from '../identity.ts';
import { formatWindow, type TimeWindow } from '../window.ts';
import { lockForget, pseudonymFor, readForgetSalt } from './pseudonym.ts';

/** Rows per page read from the store. */
export const EXPORT_PAGE_SIZE = 500;
/** The sink gets whole lines in chunks of about this many characters (or one line, if longer). */
export const EXPORT_CHUNK_CHARS = 64 * 1024;

/** The fields of one export line, in wire order (spec 3 §export). */
export const EXPORT_FIELDS = [
  'id',
  'timestamp',
  'session_id',
  'turn_id',
  'parent_event_id',
  'type',
  'actor',
  'sensitivity',
  'payload',
] as const;

export type ExportRow = Pick<EventRow, (typeof EXPORT_FIELDS)[number]>;

export interface UserExportRequest {
  userId: string;
  /** Open ends mean all time (the export's default). */
  window: TimeWindow;
}

export interface UserExportDeps {
  store: Store;
  /** The audit event is stamped by the bus, stored in the transaction that decides its subject, then delivered. */
  bus: Pick<Bus, 'stamp' | 'deliverStored'>;
  /** Who asked: `operator` on the command line, `user` through the HTTP endpoint. */
  actor?: Actor;
  pageSize?: number;
}

/** Receives the export in chunks of whole lines; its promise is the backpressure. */
export type ExportSink = (chunk: string) => void | Promise<void>;

export interface UserExportSummary {
  readonly userId: string;
  readonly rowCount: number;
  /** UTF-8 bytes handed to the sink. */
  readonly byteCount: number;
  readonly window: { start: string | null; end: string | null };
  /** Id of the `analytics.user_exported` audit event. */
  readonly auditEventId: string;
}

/**
 * Streams the export into `sink` in chunks of whole lines (a page, or about EXPORT_CHUNK_CHARS),
 * awaiting each, then stores `analytics.user_exported` with the realised counts and window in one write
 * transaction with the decision of whom it names (a forget is serialised before or after it, never
 * between), and delivers it. A sink that throws, or a `drained` that rejects, ends the export without the
 * audit event (not drained).
 */
export async function runUserExport(
  deps: UserExportDeps,
  request: UserExportRequest,
  sink: ExportSink,
  options: { drained?: () => Promise<void> } = {},
): Promise<UserExportSummary> {
  const userId = assertUserId(request.userId);
  let rowCount = 0;
  let byteCount = 0;
  for await (const page of readUserEventPages(
    deps.store,
    { userId, window: request.window },
    deps.pageSize,
  )) {
    let chunk = '';
    for (const row of page) {
      chunk += encodeExportLine(row);
      rowCount++;
      if (chunk.length >= EXPORT_CHUNK_CHARS) {
        byteCount += Buffer.byteLength(chunk, 'utf8');
        await sink(chunk);
        chunk = '';
      }
    }
    if (chunk.length > 0) {
      byteCount += Buffer.byteLength(chunk, 'utf8');
      await sink(chunk);
    }
  }
  // the audit claims a full export only once the reader has every byte (HTTP: the response finished)
  await options.drained?.();
  const window = formatWindow(request.window);
  const event = await deps.store.kysely.transaction().execute(async (trx) => {
    await lockForget(trx, deps.store.dialect.engine);
    const subject = await auditSubject(trx, userId);
    const audit = deps.bus.stamp({
      type: 'analytics.user_exported',
      actor: deps.actor ?? 'operator',
      payload: { user_id: subject, row_count: rowCount, byte_count: byteCount, window },
    });
    await trx.insertInto('events').values(toRow(audit)).execute();
    return audit;
  });
  deps.bus.deliverStored(event);
  return { userId, rowCount, byteCount, window, auditEventId: event.id };
}

/**
 * Who the audit record names: the id itself, or its pseudonym once the id was forgotten (an
 * `analytics.user_forgotten` of that pseudonym is stored), so exporting a forgotten id never writes
 * the raw id back into the store. Reads only: a store without a salt has forgotten nobody.
 */
async function auditSubject(db: Kysely<Database>, userId: string): Promise<string> {
  const salt = await readForgetSalt(db);
  if (salt === undefined) return userId;
  const pseudonym = pseudonymFor(salt, userId);
  const forgotten = await db
    .selectFrom('events')
    .select('id')
    .where('user_id', '=', pseudonym)
    .where('type', '=', 'analytics.user_forgotten')
    .limit(1)
    .executeTakeFirst();
  return forgotten === undefined ? userId : pseudonym;
}

/** Rows the export would return now (the HTTP `X-Svc-Row-Count` at request arrival). */
export async function countUserEvents(store: Store, request: UserExportRequest): Promise<number> {
  const userId = assertUserId(request.userId);
  const { startUs, endUs } = request.window;
  const row = await store.kysely
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .$if(startUs !== null, (qb) => qb.where('timestamp_us', '>=', startUs as number))
    .$if(endUs !== null, (qb) => qb.where('timestamp_us', '<', endUs as number))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The matching rows in ascending id, `pageSize` at a time. Each page is its own short read, keyed on
 * the last id seen, so no transaction stays open while a slow consumer drains a page.
 */
export async function* readUserEventPages(
  store: Store,
  request: UserExportRequest,
  pageSize = EXPORT_PAGE_SIZE,
): AsyncGenerator<ExportRow[]> {
  const userId = assertUserId(request.userId);
  const { startUs, endUs } = request.window;
  let after = '';
  for (;;) {
    const page = await store.kysely
      .selectFrom('events')
      .select(EXPORT_FIELDS)
      .where('user_id', '=', userId) // exact, binary collation: u1 never matches u10
      .where('id', '>', after)
      .$if(startUs !== null, (qb) => qb.where('timestamp_us', '>=', startUs as number))
      .$if(endUs !== null, (qb) => qb.where('timestamp_us', '<', endUs as number))
      .orderBy('id')
      .limit(pageSize)
      .execute();
    if (page.length === 0) return;
    yield page;
    if (page.length < pageSize) return;
    after = page[page.length - 1].id;
  }
}

/**
 * One export line. The stored payload text is embedded as it is, so cost strings and numbers reach
 * the subject exactly as stored; whitespace line breaks (never inside a valid JSON string) are folded.
 */
export function encodeExportLine(row: ExportRow): string {
  const payload = /[\r\n]/.test(row.payload) ? row.payload.replace(/[\r\n]+/g, ' ') : row.payload;
  return (
    `{"id":${JSON.stringify(row.id)},"timestamp":${JSON.stringify(row.timestamp)}` +
    `,"session_id":${JSON.stringify(row.session_id)},"turn_id":${JSON.stringify(row.turn_id)}` +
    `,"parent_event_id":${JSON.stringify(row.parent_event_id)},"type":${JSON.stringify(row.type)}` +
    `,"actor":${JSON.stringify(row.actor)},"sensitivity":${JSON.stringify(row.sensitivity)}` +
    `,"payload":${payload}}\n`
  );
}
