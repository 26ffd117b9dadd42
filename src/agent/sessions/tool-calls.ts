/**
 * @module Tool calls of a session (the tool_calls table): one row per tool_use the loop dispatches,
 * opened when it starts and closed with its output, status and DECISIONS §3 error class.
 */
import type { Kysely } from 'kysely';
import type { Database, ToolCallRow } from '../../store/schema.ts';

export const TOOL_CALL_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

export interface NewToolCall {
  id: string;
  session_id: string;
  turn_id: string;
  /** The assistant message holding the tool_use block. */
  message_id: string | null;
  tool_use_id: string;
  tool_name: string;
  input: Record<string, unknown>;
  status?: ToolCallStatus;
  started_at: string;
}

export interface ToolCallOutcome {
  output: string | null;
  status: ToolCallStatus;
  error_class: string | null;
  completed_at: string;
  /** Whether the output was cut (completed tools); recovery's tool.completed reads it back. */
  truncated?: boolean;
}

export async function insertToolCall(db: Kysely<Database>, call: NewToolCall): Promise<ToolCallRow> {
  return db
    .insertInto('tool_calls')
    .values({
      id: call.id,
      session_id: call.session_id,
      turn_id: call.turn_id,
      message_id: call.message_id,
      tool_use_id: call.tool_use_id,
      tool_name: call.tool_name,
      input: JSON.stringify(call.input),
      output: null,
      status: call.status ?? 'running',
      error_class: null,
      started_at: call.started_at,
      completed_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function finishToolCall(
  db: Kysely<Database>,
  id: string,
  outcome: ToolCallOutcome,
): Promise<void> {
  await db
    .updateTable('tool_calls')
    .set({
      // PostgreSQL text cannot hold NUL (a command's -print0 output, a file with a NUL past its first 8 KiB):
      // the row keeps U+FFFD in its place on either store; the model's tool result is unchanged
      output: outcome.output?.replaceAll('\0', '\uFFFD') ?? null,
      status: outcome.status,
      error_class: outcome.error_class,
      completed_at: outcome.completed_at,
      ...(outcome.truncated === undefined ? {} : { truncated: outcome.truncated ? 1 : 0 }),
    })
    .where('id', '=', id)
    .execute();
}

export async function listToolCalls(
  db: Kysely<Database>,
  sessionId: string,
  turnId?: string,
): Promise<ToolCallRow[]> {
  let q = db.selectFrom('tool_calls').selectAll().where('session_id', '=', sessionId);
  if (turnId !== undefined) q = q.where('turn_id', '=', turnId);
  return q.orderBy('started_at', 'asc').orderBy('id', 'asc').execute();
}
