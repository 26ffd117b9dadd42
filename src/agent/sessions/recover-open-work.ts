/**
 * @module What a turn a dead process left open had itself opened (spec 2 cancellation table): tools with no
 * `tool.completed`/`tool.failed` (called, or scheduled and never started) and delegations with no
 * `delegate.completed`/`delegate.failed`. Recovery closes each as a live cancel would, before the turn's
 * `turn.cancelled`.
 */
import { type Kysely, sql } from 'kysely';
import type { Bus } from '../../events/bus.ts';
import { LLM_CALL_TERMINATORS, type ToolErrorClass } from '../../events/catalog.ts';
import { formatDecimal, sumDecimals, ZERO } from '../../lib/decimal.ts';
import { parseIsoUs } from '../../lib/time.ts';
import type { Database } from '../../store/schema.ts';

export interface OpenTool {
  tool_use_id: string;
  tool_name: string;
  /** Its tool.called, null when it was scheduled and never started (spec 2 "At the seam"). */
  called_event_id: string | null;
  /** From tool.called to its row's completed_at, else to the turn's last recorded event. */
  latency_ms: number;
  /**
   * The outcome its tool_calls row already holds when the process died between closing the row and
   * committing the end event: the end event then says what happened, not `cancelled`.
   */
  finished?: {
    status: 'completed' | 'failed';
    output: string;
    error_class: string | null;
    truncated: boolean;
  };
}

export interface OpenDelegation {
  tool_use_id: string;
  worker_session_id: string | null;
  started_event_id: string;
  /** Stamped cost of the worker's calls (exact decimal). */
  cost_usd: string;
}

/** The events of one turn, as recovery reads them. */
export interface TurnEventRow {
  id: string;
  type: string;
  timestamp_us: number;
  payload: string;
}

/** Tools of the turn with no end event: tool.called ones, then tool_calls rows still pending or running. */
export async function findOpenTools(
  db: Kysely<Database>,
  turnId: string,
  rows: readonly TurnEventRow[],
): Promise<OpenTool[]> {
  const ended = new Set(
    rows.filter((r) => r.type === 'tool.completed' || r.type === 'tool.failed').map((r) => useIdOf(r)),
  );
  const lastUs = Math.max(0, ...rows.map((r) => Number(r.timestamp_us)));
  const finished = new Map(
    (
      await db
        .selectFrom('tool_calls')
        .select(['tool_use_id', 'status', 'output', 'error_class', 'completed_at', 'truncated'])
        .where('turn_id', '=', turnId)
        .where('status', 'in', ['completed', 'failed'])
        .execute()
    ).map((f) => [f.tool_use_id, f]),
  );
  const open: OpenTool[] = [];
  for (const r of rows) {
    const p = JSON.parse(r.payload) as { tool_use_id?: unknown; tool_name?: unknown };
    if (r.type !== 'tool.called' || typeof p.tool_use_id !== 'string' || ended.has(p.tool_use_id)) continue;
    const row = finished.get(p.tool_use_id);
    const endUs = (row?.completed_at && parseIsoUs(row.completed_at)) || lastUs;
    open.push({
      tool_use_id: p.tool_use_id,
      tool_name: String(p.tool_name ?? ''),
      called_event_id: r.id,
      latency_ms: Math.max(0, endUs - Number(r.timestamp_us)) / 1000,
      ...(row && {
        finished: {
          status: row.status as 'completed' | 'failed',
          output: row.output ?? '',
          error_class: row.error_class,
          truncated: row.truncated === 1,
        },
      }),
    });
  }
  // a row is written before its tool.called: one the trace never saw, or never started, is open as well
  const pending = await db
    .selectFrom('tool_calls')
    .select(['tool_use_id', 'tool_name'])
    .where('turn_id', '=', turnId)
    .where('status', 'in', ['pending', 'running'])
    .orderBy('started_at')
    .orderBy('id')
    .execute();
  for (const p of pending)
    if (!ended.has(p.tool_use_id) && !open.some((o) => o.tool_use_id === p.tool_use_id))
      open.push({ ...p, called_event_id: null, latency_ms: 0 });
  return open;
}

/** delegate.started events of the turn with no delegate.completed / delegate.failed for their tool_use_id. */
export async function findOpenDelegations(
  db: Kysely<Database>,
  rows: readonly TurnEventRow[],
): Promise<OpenDelegation[]> {
  const ended = new Set(
    rows
      .filter((r) => r.type === 'delegate.completed' || r.type === 'delegate.failed')
      .map((r) => useIdOf(r)),
  );
  const open: OpenDelegation[] = [];
  for (const r of rows) {
    if (r.type !== 'delegate.started') continue;
    const p = JSON.parse(r.payload) as { tool_use_id?: unknown; worker_session_id?: unknown };
    if (typeof p.tool_use_id !== 'string' || ended.has(p.tool_use_id)) continue;
    const worker = typeof p.worker_session_id === 'string' ? p.worker_session_id : null;
    open.push({
      tool_use_id: p.tool_use_id,
      worker_session_id: worker,
      started_event_id: r.id,
      cost_usd: worker === null ? formatDecimal(ZERO) : await workerCost(db, worker),
    });
  }
  return open;
}

/**
 * Publishes the closing events of a recovered turn's open work, as spec 2's cancel during delegation and
 * during tool dispatch: delegate.failed (cancelled_by_user), then tool.failed (cancelled) per open tool.
 */
export function publishOpenWorkClosed(
  bus: Pick<Bus, 'publish'>,
  scope: { actor: 'system'; session_id: string; turn_id: string },
  work: { delegations: readonly OpenDelegation[]; tools: readonly OpenTool[] },
  reason: string,
): Promise<void>[] {
  const committed: Promise<void>[] = [];
  for (const d of work.delegations)
    committed.push(
      bus.publish({
        type: 'delegate.failed',
        ...scope,
        parent_event_id: d.started_event_id,
        payload: {
          tool_use_id: d.tool_use_id,
          worker_session_id: d.worker_session_id,
          failure_mode: 'cancelled_by_user',
          message: `the server stopped during delegation (${reason}); the task was not finished`,
          cost_usd: d.cost_usd,
        },
      }).committed,
    );
  for (const t of work.tools) {
    const ids = { tool_use_id: t.tool_use_id, tool_name: t.tool_name, latency_ms: t.latency_ms };
    const event = { ...scope, parent_event_id: t.called_event_id };
    const published =
      t.finished?.status === 'completed'
        ? bus.publish({
            ...event,
            type: 'tool.completed',
            payload: {
              ...ids,
              output_bytes: Buffer.byteLength(t.finished.output),
              truncated: t.finished.truncated,
            },
          })
        : bus.publish({
            ...event,
            type: 'tool.failed',
            payload: t.finished
              ? {
                  ...ids,
                  error_class: (t.finished.error_class ?? 'execution_error') as ToolErrorClass,
                  message: t.finished.output,
                }
              : {
                  ...ids,
                  error_class: 'cancelled',
                  message: `the server stopped before this tool finished (${reason})`,
                },
          });
    committed.push(published.committed);
  }
  return committed;
}

// --- internal ---

function useIdOf(r: TurnEventRow): unknown {
  return (JSON.parse(r.payload) as { tool_use_id?: unknown }).tool_use_id;
}

async function workerCost(db: Kysely<Database>, workerId: string): Promise<string> {
  const { rows } = await sql<{ cost_usd: string }>`
    SELECT cost_usd FROM events
    WHERE session_id = ${workerId} AND type IN (${sql.join([...LLM_CALL_TERMINATORS])})
      AND cost_usd IS NOT NULL`.execute(db);
  return formatDecimal(sumDecimals(rows.map((r) => String(r.cost_usd))));
}
