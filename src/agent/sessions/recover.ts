/**
 * @module Startup recovery (issue 10, spec 2 item 5): an agent turn a dead process left open (turn.started
 * with no turn.completed/turn.cancelled, or a session still holding it) gets `bus.gap_detected` (as the
 * gateway's, naming its unclosed llm.call_started), `delegate.failed` / `tool.failed` for the delegations and
 * tools it left open, and `turn.cancelled` with reason `server_restart`; its partial messages and running
 * tool calls are marked cancelled and its session is freed for a new turn,
 * counting the turn and the stamped costs of its calls and its workers' calls as a live end would.
 * One `svc serve` per trace store: a second server's live turns would look dead.
 */
import { type Kysely, sql } from 'kysely';
import type { Bus } from '../../events/bus.ts';
import { LLM_CALL_TERMINATORS } from '../../events/catalog.ts';
import { formatDecimal, sumDecimals } from '../../lib/decimal.ts';
import type { Database } from '../../store/schema.ts';
import {
  findOpenDelegations,
  findOpenTools,
  type OpenDelegation,
  type OpenTool,
  publishOpenWorkClosed,
} from './recover-open-work.ts';
import { finishTurn } from './store.ts';

export const RESTART_REASON = 'server_restart';
const TURN_ENDS = ['turn.completed', 'turn.cancelled'] as const;

export interface UnfinishedTurn {
  session_id: string;
  turn_id: string;
  /** The turn.started event, null when the process died before it was committed. */
  started_event_id: string | null;
  /** Its llm.call_started events that no llm.call_completed / llm.call_failed closed. */
  open_call_ids: string[];
  /** Time of the turn's first event (of the claim on the session when none was committed). */
  first_event_at: string;
  /** A bus.gap_detected already names it (an earlier start died before its turn.cancelled). */
  gap_reported: boolean;
  /** Stamped cost of its model calls and of the calls of the workers it delegated to (exact decimal). */
  cost_usd: string;
  /** The model route.decided chose, null when it never routed. */
  model: string | null;
  /** Model calls it opened. */
  steps: number;
  /** Delegations with no end event (closed as delegate.failed). */
  open_delegations: OpenDelegation[];
  /** Tools with no end event (closed as tool.failed cancelled). */
  open_tools: OpenTool[];
  /** tool.confirmation_requested events with no tool.confirmation_resolved (resolved as cancelled). */
  open_confirmations: OpenConfirmation[];
}

export interface OpenConfirmation {
  requested_event_id: string;
  request_id: string;
  tool_use_id: string;
  tool_name: string;
}

/** Agent turns left open, oldest first (turn ids are time-ordered ULIDs). */
export async function findUnfinishedTurns(db: Kysely<Database>): Promise<UnfinishedTurn[]> {
  const { rows } = await sql<{ session_id: string; turn_id: string }>`
    SELECT min(session_id) AS session_id, turn_id FROM (
      SELECT s.session_id, s.turn_id FROM events s
      WHERE s.type = 'turn.started' AND s.session_id IS NOT NULL AND s.turn_id IS NOT NULL
      UNION
      SELECT id AS session_id, current_turn_id AS turn_id FROM sessions
      WHERE current_turn_id IS NOT NULL
    ) c
    WHERE NOT EXISTS (SELECT 1 FROM events t WHERE t.turn_id = c.turn_id AND t.type IN (${sql.join([...TURN_ENDS])}))
    GROUP BY turn_id ORDER BY turn_id`.execute(db);
  const out: UnfinishedTurn[] = [];
  for (const r of rows) out.push(await describeTurn(db, r.session_id, r.turn_id));
  return out;
}

/**
 * Finds the open turns, ends them on their sessions (turn counted, cost added; a session that no longer holds
 * the turn was settled before the crash and is left alone) and cancels their partial messages and tool calls.
 */
export async function freeUnfinishedTurns(
  db: Kysely<Database>,
  now: string,
  newId: () => string,
): Promise<UnfinishedTurn[]> {
  const turns = await findUnfinishedTurns(db);
  for (const t of turns) {
    await finishTurn(db, t.session_id, { turnId: t.turn_id, costDelta: t.cost_usd, now });
    // a worker runs one turn (delegate.ts ends it after); its planner's turn is recovered alongside
    await db
      .updateTable('sessions')
      .set({ ended_at: now })
      .where('id', '=', t.session_id)
      .where('is_worker', '=', 1)
      .where('ended_at', 'is', null)
      .execute();
    await db.transaction().execute(async (trx) => {
      await trx
        .updateTable('messages')
        .set({ status: 'cancelled' })
        .where('turn_id', '=', t.turn_id)
        .where('status', '=', 'in_progress')
        .execute();
      await trx
        .updateTable('tool_calls')
        .set({ status: 'cancelled', error_class: 'cancelled', completed_at: now })
        .where('turn_id', '=', t.turn_id)
        .where('status', 'in', ['pending', 'running'])
        .execute();
      // a cancelled answer is what the history turns into "the user cancelled this request" (messages.ts):
      // one that died before writing any gets an empty one, as a live cancel before the first byte does
      const cancelled = await trx
        .selectFrom('messages')
        .select('id')
        .where('turn_id', '=', t.turn_id)
        .where('status', '=', 'cancelled')
        .executeTakeFirst();
      if (!cancelled)
        await trx
          .insertInto('messages')
          .values({
            id: newId(),
            session_id: t.session_id,
            turn_id: t.turn_id,
            role: 'assistant',
            content: '[]',
            metadata: '{}',
            status: 'cancelled',
            created_at: now,
          })
          .execute();
    });
  }
  return turns;
}

/**
 * Publishes, per turn, `bus.gap_detected` (unless already reported), the ends of its open delegations and
 * tools, then `turn.cancelled`; resolves once committed. Newest turn first: a worker's turn (newer than its
 * planner's) ends before the planner's delegate.failed, as a live cancel orders them.
 */
export async function publishRecoveredTurns(
  bus: Pick<Bus, 'publish'>,
  turns: readonly UnfinishedTurn[],
): Promise<void> {
  const committed: Promise<void>[] = [];
  for (const t of [...turns].reverse()) {
    const scope = { actor: 'system', session_id: t.session_id, turn_id: t.turn_id } as const;
    if (!t.gap_reported) {
      const gap = bus.publish({
        type: 'bus.gap_detected',
        ...scope,
        parent_event_id: t.open_call_ids[0] ?? t.started_event_id,
        payload: {
          reason: 'process_ended',
          turn_id: t.turn_id,
          llm_call_started_ids: t.open_call_ids,
          first_event_at: t.first_event_at,
        },
      });
      committed.push(gap.committed);
    }
    // a request nobody answered is resolved as a live cancel resolves it, before its tool's tool.failed
    for (const c of t.open_confirmations)
      committed.push(
        bus.publish({
          type: 'tool.confirmation_resolved',
          ...scope,
          parent_event_id: c.requested_event_id,
          payload: {
            request_id: c.request_id,
            tool_use_id: c.tool_use_id,
            tool_name: c.tool_name,
            decision: 'deny',
            scope: 'once',
            timed_out: false,
            cancelled: true,
          },
        }).committed,
      );
    const work = { delegations: t.open_delegations, tools: t.open_tools };
    committed.push(...publishOpenWorkClosed(bus, scope, work, RESTART_REASON));
    const cancelled = bus.publish({
      type: 'turn.cancelled',
      ...scope,
      parent_event_id: t.started_event_id,
      payload: {
        reason: RESTART_REASON,
        session_id: t.session_id,
        turn_id: t.turn_id,
        cost_usd: t.cost_usd,
        model: t.model,
        steps: t.steps,
      },
    });
    committed.push(cancelled.committed);
  }
  await Promise.all(committed);
}

// --- internal ---

async function describeTurn(
  db: Kysely<Database>,
  sessionId: string,
  turnId: string,
): Promise<UnfinishedTurn> {
  const { rows } = await sql<{
    id: string;
    type: string;
    timestamp: string;
    timestamp_us: number;
    closed: number;
    cost_usd: string | null;
    payload: string;
  }>`
    SELECT s.id, s.type, s.timestamp, s.timestamp_us, s.cost_usd, s.payload,
      EXISTS (SELECT 1 FROM events c WHERE c.turn_id = s.turn_id AND c.parent_event_id = s.id
              AND c.type IN (${sql.join([...LLM_CALL_TERMINATORS])})) AS closed
    FROM events s WHERE s.turn_id = ${turnId} ORDER BY s.id`.execute(db);
  const session = await db
    .selectFrom('sessions')
    .select('updated_at')
    .where('id', '=', sessionId)
    .executeTakeFirst();
  return {
    session_id: sessionId,
    turn_id: turnId,
    started_event_id: rows.find((r) => r.type === 'turn.started')?.id ?? null,
    open_call_ids: rows.filter((r) => r.type === 'llm.call_started' && !r.closed).map((r) => r.id),
    first_event_at: rows[0]?.timestamp ?? session?.updated_at ?? '',
    gap_reported: rows.some((r) => r.type === 'bus.gap_detected'),
    cost_usd: formatDecimal(sumDecimals([...callCosts(rows), ...(await workerCosts(db, rows))])),
    model: chosenModel(rows),
    steps: rows.filter((r) => r.type === 'llm.call_started').length,
    open_delegations: await findOpenDelegations(db, rows),
    open_tools: await findOpenTools(db, turnId, rows),
    open_confirmations: openConfirmations(rows),
  };
}

type TurnEventRow = { type: string; cost_usd: string | null; payload: string };

function callCosts(rows: readonly TurnEventRow[]): string[] {
  return rows
    .filter((r) => (LLM_CALL_TERMINATORS as readonly string[]).includes(r.type) && r.cost_usd !== null)
    .map((r) => String(r.cost_usd));
}

/** Costs of the calls of the worker sessions this turn's delegate.started events name (the live roll-up). */
async function workerCosts(db: Kysely<Database>, rows: readonly TurnEventRow[]): Promise<string[]> {
  const workers = rows
    .filter((r) => r.type === 'delegate.started')
    .map((r) => (JSON.parse(r.payload) as { worker_session_id?: unknown }).worker_session_id)
    .filter((id): id is string => typeof id === 'string');
  if (workers.length === 0) return [];
  const { rows: costs } = await sql<{ cost_usd: string }>`
    SELECT cost_usd FROM events
    WHERE session_id IN (${sql.join(workers)}) AND type IN (${sql.join([...LLM_CALL_TERMINATORS])})
      AND cost_usd IS NOT NULL`.execute(db);
  return costs.map((r) => String(r.cost_usd));
}

function openConfirmations(rows: readonly (TurnEventRow & { id: string })[]): OpenConfirmation[] {
  const requestOf = (r: TurnEventRow) =>
    JSON.parse(r.payload) as { request_id?: unknown; tool_use_id?: unknown; tool_name?: unknown };
  const resolved = new Set(
    rows.filter((r) => r.type === 'tool.confirmation_resolved').map((r) => requestOf(r).request_id),
  );
  const open: OpenConfirmation[] = [];
  for (const r of rows) {
    if (r.type !== 'tool.confirmation_requested') continue;
    const p = requestOf(r);
    if (typeof p.request_id !== 'string' || resolved.has(p.request_id)) continue;
    open.push({
      requested_event_id: r.id,
      request_id: p.request_id,
      tool_use_id: String(p.tool_use_id ?? ''),
      tool_name: String(p.tool_name ?? ''),
    });
  }
  return open;
}

function chosenModel(rows: readonly TurnEventRow[]): string | null {
  const route = rows.find((r) => r.type === 'route.decided');
  const model = route ? (JSON.parse(route.payload) as { chosen_model?: unknown }).chosen_model : null;
  return typeof model === 'string' ? model : null;
}
