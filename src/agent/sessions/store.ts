/**
 * @module Session rows of the agent server (spec 2 Resources: Session): create, read, list (most recent
 * first, opaque cursor), end, purge, active model, the one-turn-in-flight guard and exact cost roll-up.
 */
import type { Kysely } from 'kysely';
import { add, formatDecimal, parseDecimal } from '../../lib/decimal.ts';
import { SvcError } from '../../lib/errors.ts';
import type { Store } from '../../store/open.ts';
import type { Database, SessionRow } from '../../store/schema.ts';

export interface NewSession {
  id: string;
  workspace_path: string;
  /** The workspace's real path now, the folder its tools stay confined to (workspace-roots.ts). */
  workspace_root?: string;
  active_model: string;
  routing_policy_version: string;
  is_worker?: boolean;
  parent_session_id?: string | null;
  /** active_model is the user's pinned choice (an explicit initial_active_model): routing slot 2. */
  sticky?: boolean;
  /** ISO timestamp (lib/time.ts formatUs). */
  now: string;
}

export async function createSession(db: Kysely<Database>, input: NewSession): Promise<SessionRow> {
  return db
    .insertInto('sessions')
    .values({
      id: input.id,
      workspace_path: input.workspace_path,
      workspace_root: input.workspace_root ?? null,
      active_model: input.active_model,
      created_at: input.now,
      updated_at: input.now,
      routing_policy_version: input.routing_policy_version,
      turn_count: 0,
      cost_so_far_usd: '0',
      current_turn_id: null,
      current_turn_status: null,
      is_worker: input.is_worker ? 1 : 0,
      parent_session_id: input.parent_session_id ?? null,
      ended_at: null,
      disposition: null,
      sticky: input.sticky ? 1 : 0,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function getSession(db: Kysely<Database>, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The session, or 404 session_not_found. */
export async function requireSession(db: Kysely<Database>, id: string): Promise<SessionRow> {
  const row = await getSession(db, id);
  if (!row) throw new SvcError('session_not_found', { message: `No session ${id}.` });
  return row;
}

/** The session when it is still open: 404 session_not_found, or 409 session_already_ended. */
export async function requireOpenSession(db: Kysely<Database>, id: string): Promise<SessionRow> {
  const row = await requireSession(db, id);
  if (row.ended_at !== null) {
    throw new SvcError('session_already_ended', {
      message: `Session ${id} ended at ${row.ended_at}; create a new session to continue.`,
      details: { ended_at: row.ended_at },
    });
  }
  return row;
}

/**
 * The worker session of `plannerId` that started turn `turnId`, if any: a planner's socket shows its
 * workers' turns (include_worker_sessions), so a cancel frame there may name one.
 */
export async function workerSessionOfTurn(
  db: Kysely<Database>,
  plannerId: string,
  turnId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('events')
    .innerJoin('sessions', 'sessions.id', 'events.session_id')
    .select('events.session_id')
    .where('events.turn_id', '=', turnId)
    .where('events.type', '=', 'turn.started')
    .where('sessions.parent_session_id', '=', plannerId)
    .executeTakeFirst();
  return row?.session_id ?? undefined;
}

export interface ListSessionsQuery {
  workspace?: string;
  is_worker?: boolean;
  /** next_cursor of the previous page. */
  cursor?: string;
  limit: number;
}

/** Most recent first (created_at, then id); throws validation_error naming `cursor` for a foreign cursor. */
export async function listSessions(
  db: Kysely<Database>,
  query: ListSessionsQuery,
): Promise<{ sessions: SessionRow[]; next_cursor: string | null }> {
  let q = db.selectFrom('sessions').selectAll();
  if (query.workspace !== undefined) q = q.where('workspace_path', '=', query.workspace);
  if (query.is_worker !== undefined) q = q.where('is_worker', '=', query.is_worker ? 1 : 0);
  if (query.cursor !== undefined) {
    const { createdAt, id } = decodeSessionCursor(query.cursor);
    q = q.where((eb) =>
      eb.or([
        eb('created_at', '<', createdAt),
        eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)]),
      ]),
    );
  }
  const rows = await q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
  const more = rows.length > query.limit;
  const sessions = more ? rows.slice(0, query.limit) : rows;
  const last = sessions.at(-1);
  return { sessions, next_cursor: more && last ? encodeSessionCursor(last) : null };
}

/** Sessions not ended (GET /health active_sessions). */
export async function countOpenSessions(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('ended_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Every session in the store, for the svc_session_count gauge read synchronously at scrape. SQLite: the
 * query built by Kysely runs on the store's own synchronous connection. PostgreSQL has no synchronous
 * read: a scrape reads the count the previous scrape started fetching (0 before the first answer).
 */
export function createSessionCounter(store: Store): () => number {
  const q = store.kysely
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .compile();
  if (store.engine === 'sqlite') {
    const { db } = store;
    return () => {
      const row = db.prepare(q.sql).get(...(q.parameters as [])) as { n: number } | undefined;
      return Number(row?.n ?? 0);
    };
  }
  let last = 0;
  let fetching = false;
  return () => {
    if (!fetching) {
      fetching = true;
      store.kysely
        .executeQuery<{ n: number }>(q)
        .then((r) => {
          last = Number(r.rows[0]?.n ?? last);
        })
        .catch(() => undefined) // the gauge keeps its last value; the store reports its own failures
        .finally(() => {
          fetching = false;
        });
    }
    return last;
  };
}

/** Marks the session ended (disposition `completed`); an already ended session keeps its first ended_at. */
export async function endSession(
  db: Kysely<Database>,
  id: string,
  now: string,
): Promise<SessionRow | undefined> {
  await db
    .updateTable('sessions')
    .set({ ended_at: now, disposition: 'completed', updated_at: now })
    .where('id', '=', id)
    .where('ended_at', 'is', null)
    .execute();
  return getSession(db, id);
}

/**
 * Deletes the session with its messages, tool calls and events; its worker sessions (and theirs) follow.
 * Returns the ids removed (the session first), empty when it did not exist.
 */
export async function purgeSession(db: Kysely<Database>, id: string): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const ids = await sessionTree(trx, id);
    if (ids.length === 0) return ids;
    await trx.deleteFrom('events').where('session_id', 'in', ids).execute();
    await trx.deleteFrom('tool_calls').where('session_id', 'in', ids).execute();
    await trx.deleteFrom('messages').where('session_id', 'in', ids).execute();
    // children before parents (the FK would cascade, but the order keeps it explicit)
    for (const sid of [...ids].reverse()) await trx.deleteFrom('sessions').where('id', '=', sid).execute();
    return ids;
  });
}

/** Sets active_model; `sticky` (when given) marks it the user's pinned choice (true) or a routed one (false). */
export async function setActiveModel(
  db: Kysely<Database>,
  id: string,
  model: string,
  now: string,
  sticky?: boolean,
): Promise<void> {
  const pin = sticky === undefined ? {} : { sticky: sticky ? 1 : 0 };
  await db
    .updateTable('sessions')
    .set({ active_model: model, updated_at: now, ...pin })
    .where('id', '=', id)
    .execute();
}

/**
 * Claims the session for a turn: only when no turn is in flight and the session is open.
 * False means another turn holds it (the route answers 409 turn_in_flight).
 */
export async function beginTurn(
  db: Kysely<Database>,
  id: string,
  turnId: string,
  _now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({ current_turn_id: turnId, current_turn_status: 'in_flight' })
    .where('id', '=', id)
    .where('current_turn_id', 'is', null)
    .where('ended_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export interface FinishTurn {
  turnId: string;
  /** Decimal string, added exactly to cost_so_far_usd. */
  costDelta: string;
  now: string;
  /** The routing policy that routed the turn: the session's routing_policy_version follows it. */
  routingPolicyVersion?: string;
}

/**
 * Ends the turn `turnId` holds: clears current_turn_*, counts the turn, adds its cost, bumps updated_at.
 * False (nothing changed) when that turn does not hold the session.
 */
export async function finishTurn(db: Kysely<Database>, id: string, finish: FinishTurn): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('sessions')
      .select(['cost_so_far_usd', 'turn_count'])
      .where('id', '=', id)
      .where('current_turn_id', '=', finish.turnId)
      .executeTakeFirst();
    if (!row) return false;
    await trx
      .updateTable('sessions')
      .set({
        current_turn_id: null,
        current_turn_status: null,
        turn_count: row.turn_count + 1,
        cost_so_far_usd: addCost(row.cost_so_far_usd, finish.costDelta),
        updated_at: finish.now,
        ...(finish.routingPolicyVersion ? { routing_policy_version: finish.routingPolicyVersion } : {}),
      })
      .where('id', '=', id)
      .execute();
    return true;
  });
}

/** Frees a session whose turn died with the process (startup gap recovery): no count, no cost. */
export async function clearTurn(db: Kysely<Database>, id: string, turnId: string): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({ current_turn_id: null, current_turn_status: null })
    .where('id', '=', id)
    .where('current_turn_id', '=', turnId)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** Adds `costDelta` exactly (a worker's cost rolled up into its planner). */
export async function addSessionCost(db: Kysely<Database>, id: string, costDelta: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('sessions')
      .select('cost_so_far_usd')
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new SvcError('session_not_found', { message: `No session ${id}.` });
    await trx
      .updateTable('sessions')
      .set({ cost_so_far_usd: addCost(row.cost_so_far_usd, costDelta) })
      .where('id', '=', id)
      .execute();
  });
}

// --- internal ---

function addCost(current: string, delta: string): string {
  return formatDecimal(add(parseDecimal(current), parseDecimal(delta)));
}

/** The session and every session below it through parent_session_id, parents first. */
async function sessionTree(db: Kysely<Database>, id: string): Promise<string[]> {
  const root = await db.selectFrom('sessions').select('id').where('id', '=', id).executeTakeFirst();
  if (!root) return [];
  const ids = [root.id];
  for (let i = 0; i < ids.length; i++) {
    const children = await db
      .selectFrom('sessions')
      .select('id')
      .where('parent_session_id', '=', ids[i])
      .execute();
    for (const c of children) ids.push(c.id);
  }
  return ids;
}

function encodeSessionCursor(row: SessionRow): string {
  return Buffer.from(`${row.created_at}|${row.id}`, 'utf8').toString('base64url');
}

function decodeSessionCursor(cursor: string): { createdAt: string; id: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const bar = text.indexOf('|');
  if (bar <= 0 || !text.slice(bar + 1).startsWith('sess_')) {
    throw new SvcError('validation_error', {
      message: 'cursor is not a next_cursor of GET /sessions.',
      details: { field: 'cursor' },
    });
  }
  return { createdAt: text.slice(0, bar), id: text.slice(bar + 1) };
}
