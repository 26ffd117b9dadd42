/**
 * @module Messages of a session in canonical form (spec 2 Resources: Message): append, status changes,
 * paged reads by message-id cursor (DECISIONS §5), and the history the loop sends to the model.
 */
import type { Kysely } from 'kysely';
import type { CanonicalMessage, ContentBlock, Role } from '../../canonical/message.ts';
import { SvcError } from '../../lib/errors.ts';
import type { Database, MessageRow } from '../../store/schema.ts';

/**
 * `in_progress` while an assistant message streams; `cancelled` when its turn was cancelled (spec 2);
 * `failed` when its model stream broke (kept for the reader, never sent to a model).
 */
export const MESSAGE_STATUSES = ['completed', 'in_progress', 'cancelled', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export interface NewMessage {
  id: string;
  session_id: string;
  turn_id: string | null;
  role: Role;
  content: ContentBlock[];
  metadata?: Record<string, unknown>;
  status?: MessageStatus;
  created_at: string;
}

/** A stored message as the REST API returns it (content and metadata parsed). */
export interface SessionMessage {
  id: string;
  session_id: string;
  turn_id: string | null;
  role: Role;
  content: ContentBlock[];
  metadata: Record<string, unknown>;
  status: MessageStatus;
  created_at: string;
}

export async function appendMessage(db: Kysely<Database>, message: NewMessage): Promise<MessageRow> {
  return db
    .insertInto('messages')
    .values({
      id: message.id,
      session_id: message.session_id,
      turn_id: message.turn_id,
      role: message.role,
      content: JSON.stringify(message.content),
      metadata: JSON.stringify(message.metadata ?? {}),
      status: message.status ?? 'completed',
      created_at: message.created_at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Sets status (and, when given, the final content of a message that streamed in). */
export async function setMessageStatus(
  db: Kysely<Database>,
  id: string,
  status: MessageStatus,
  content?: ContentBlock[],
): Promise<void> {
  await db
    .updateTable('messages')
    .set(content === undefined ? { status } : { status, content: JSON.stringify(content) })
    .where('id', '=', id)
    .execute();
}

export interface ListMessagesQuery {
  /** Only messages older than this message id. */
  before?: string;
  /** Only messages newer than this message id. */
  after?: string;
  limit: number;
}

/**
 * One page in chronological order. With `after` (and no `before`) the page starts right after it;
 * otherwise it is the newest `limit` messages of the range (with neither cursor: of the session).
 * A cursor that is no message of the session throws validation_error naming it.
 */
export async function listMessages(
  db: Kysely<Database>,
  sessionId: string,
  query: ListMessagesQuery,
): Promise<{ messages: SessionMessage[]; has_more_before: boolean; has_more_after: boolean }> {
  for (const field of ['before', 'after'] as const) {
    const id = query[field];
    if (id !== undefined && !(await exists(db, sessionId, '=', id)))
      throw new SvcError('validation_error', {
        message: `${field}: ${JSON.stringify(id.slice(0, 64))} is no message id of session ${sessionId}.`,
        details: { field },
      });
  }
  let q = db.selectFrom('messages').selectAll().where('session_id', '=', sessionId);
  if (query.before !== undefined) q = q.where('id', '<', query.before);
  if (query.after !== undefined) q = q.where('id', '>', query.after);
  const forward = query.after !== undefined && query.before === undefined;
  const rows = await q
    .orderBy('id', forward ? 'asc' : 'desc')
    .limit(query.limit + 1)
    .execute();
  const more = rows.length > query.limit;
  const page = more ? rows.slice(0, query.limit) : rows;
  if (!forward) page.reverse();
  // "more" is the side the page was cut on; the other side has more when the cursor itself bounds it
  const olderThanAfter = query.after !== undefined && (await exists(db, sessionId, '<=', query.after));
  const newerThanBefore = query.before !== undefined && (await exists(db, sessionId, '>=', query.before));
  const hasBefore = forward ? olderThanAfter : more || olderThanAfter;
  const hasAfter = forward ? more : newerThanBefore;
  return { messages: page.map(toSessionMessage), has_more_before: hasBefore, has_more_after: hasAfter };
}

/** Where a cancelled turn's unfinished answer was, the model reads this instead (spec 2: never resumed). */
export const CANCELLED_NOTE =
  '[The user cancelled the request above before it was finished; do not take it up again unless asked.]';

/**
 * After the request of a turn that ended with no answer and was not cancelled (a provider or server
 * failure, a broken stream, the step limit, an empty answer), before the next prompt, so the model does not
 * read the two requests as one still to answer.
 */
export const UNANSWERED_NOTE =
  '[The request above ended without an answer; do not take it up again unless asked.]';

/** The notes sessionHistory puts between turns (no prompt of the user's). */
export const HISTORY_NOTES: ReadonlySet<string> = new Set([CANCELLED_NOTE, UNANSWERED_NOTE]);

/**
 * The session's conversation in order, as sent to the model. A cancelled turn's unfinished answer (its
 * partial assistant message or its tool results) becomes CANCELLED_NOTE, so its request does not read as
 * one still to answer; a message refused at submission (a cancelled user prompt) and the cut answer of a
 * broken model stream (`failed`) are left out. A prompt that follows an earlier turn's request or tool
 * results with no answer between (that turn failed or stopped at the step limit) gets UNANSWERED_NOTE
 * before it.
 */
export async function sessionHistory(db: Kysely<Database>, sessionId: string): Promise<CanonicalMessage[]> {
  const rows = await db
    .selectFrom('messages')
    .select(['role', 'content', 'status', 'turn_id'])
    .where('session_id', '=', sessionId)
    .where('status', 'in', ['completed', 'cancelled'])
    .orderBy('id', 'asc')
    .execute();
  const out: CanonicalMessage[] = [];
  let lastTurn: string | null = null;
  const lastIsNote = () => {
    const last = out.at(-1)?.content.at(-1);
    return last?.type === 'text' && HISTORY_NOTES.has(last.text);
  };
  for (const r of rows) {
    const content = JSON.parse(r.content) as ContentBlock[];
    const toolResults = content.some((b) => b.type === 'tool_result');
    if (r.status === 'completed') {
      const prompt = r.role === 'user' && !toolResults;
      if (prompt && r.turn_id !== lastTurn && out.at(-1)?.role === 'user' && !lastIsNote())
        out.push({ role: 'user', content: [{ type: 'text', text: UNANSWERED_NOTE }] });
      out.push({ role: r.role as Role, content });
      lastTurn = r.turn_id;
    } else if (r.role === 'assistant' || toolResults) {
      if (!lastIsNote()) out.push({ role: 'user', content: [{ type: 'text', text: CANCELLED_NOTE }] });
      lastTurn = r.turn_id;
    }
  }
  return out;
}

export function toSessionMessage(row: MessageRow): SessionMessage {
  return {
    id: row.id,
    session_id: row.session_id,
    turn_id: row.turn_id,
    role: row.role as Role,
    content: JSON.parse(row.content) as ContentBlock[],
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    status: row.status as MessageStatus,
    created_at: row.created_at,
  };
}

// --- internal ---

async function exists(
  db: Kysely<Database>,
  sessionId: string,
  op: '<=' | '>=' | '=',
  id: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('messages')
    .select('id')
    .where('session_id', '=', sessionId)
    .where('id', op, id)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
