/**
 * @module Answers to confirmations the live registry no longer holds (svc serve restarted since, or more
 * requests came after it than it remembers): the trace store says whether the request existed on that turn and
 * how it ended, so a late answer gets what it would have got live (spec 2 state table, DECISIONS §5).
 */
import type { Kysely } from 'kysely';
import { SvcError } from '../../lib/errors.ts';
import type { Database } from '../../store/schema.ts';
import type { AnswerInput } from './confirmations.ts';

/**
 * False (200 `applied: false`) for a request that timed out; throws 409 confirmation_already_resolved for
 * one answered or settled by a cancellation (a restart included), 404 confirmation_not_found for none.
 */
export async function answerFromTrace(db: Kysely<Database>, input: AnswerInput): Promise<false> {
  const rows = await db
    .selectFrom('events')
    .select(['type', 'payload'])
    .where('session_id', '=', input.sessionId)
    .where('turn_id', '=', input.turnId)
    .where('type', 'in', ['tool.confirmation_requested', 'tool.confirmation_resolved'])
    .execute();
  const mine = rows
    .map((r) => ({
      type: r.type,
      payload: JSON.parse(r.payload) as { request_id?: string; timed_out?: boolean },
    }))
    .filter((r) => r.payload.request_id === input.requestId);
  if (!mine.some((r) => r.type === 'tool.confirmation_requested'))
    throw new SvcError('confirmation_not_found', {
      message: `no confirmation ${input.requestId} on turn ${input.turnId}`,
    });
  if (mine.some((r) => r.type === 'tool.confirmation_resolved' && r.payload.timed_out === true)) return false;
  throw new SvcError('confirmation_already_resolved', {
    message: `confirmation ${input.requestId} was already resolved; this answer was not applied`,
    details: { request_id: input.requestId, applied: false },
  });
}
