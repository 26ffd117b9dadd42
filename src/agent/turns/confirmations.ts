/**
 * @module Pending tool confirmations (spec 2 "Turn and confirmation", issue 10): the first answer wins,
 * a later one is refused with 409 confirmation_already_resolved (`details.applied: false`, DECISIONS §5),
 * and no answer within the timeout is a deny, after which an answer is 200 `applied: false` (spec 2 state
 * table). A cancelled turn settles its pending requests as `cancelled`.
 */
import { SvcError } from '../../lib/errors.ts';

export type Decision = 'allow' | 'deny';
export type Scope = 'once' | 'session';

export interface Outcome {
  decision: Decision | 'cancelled';
  scope: Scope;
  /** True when nobody answered in time (a deny). */
  timedOut: boolean;
}

export interface AskInput {
  requestId: string;
  sessionId: string;
  turnId: string;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface AnswerInput {
  sessionId: string;
  turnId: string;
  requestId: string;
  decision: Decision;
  scope: Scope;
}

export interface Confirmations {
  ask(input: AskInput): Promise<Outcome>;
  /**
   * Applies the answer (true), or reports a request that timed out (false: spec 2 answers 200 with
   * `applied: false`); throws confirmation_not_found (unknown here) or confirmation_already_resolved
   * (already answered, or settled by a cancellation).
   */
  answer(input: AnswerInput): boolean;
}

/** Resolved requests remembered for late answers (oldest forgotten first). */
const REMEMBERED = 10_000;

export function createConfirmations(): Confirmations {
  const pending = new Map<string, Pending>();
  const resolved = new Map<string, { sessionId: string; turnId: string; timedOut: boolean }>();
  const remember = (id: string, p: { sessionId: string; turnId: string }, timedOut: boolean) => {
    resolved.set(id, { sessionId: p.sessionId, turnId: p.turnId, timedOut });
    if (resolved.size > REMEMBERED) resolved.delete(resolved.keys().next().value!);
  };
  return {
    ask(input) {
      return new Promise<Outcome>((resolve) => {
        const settle = (o: Outcome) => {
          if (!pending.delete(input.requestId)) return;
          clearTimeout(timer);
          input.signal.removeEventListener('abort', onAbort);
          remember(input.requestId, input, o.timedOut);
          resolve(o);
        };
        const onAbort = () => settle({ decision: 'cancelled', scope: 'once', timedOut: false });
        const timer = setTimeout(
          () => settle({ decision: 'deny', scope: 'once', timedOut: true }),
          input.timeoutMs,
        );
        pending.set(input.requestId, { sessionId: input.sessionId, turnId: input.turnId, settle });
        if (input.signal.aborted) onAbort();
        else input.signal.addEventListener('abort', onAbort, { once: true });
      });
    },
    answer(input) {
      const p = pending.get(input.requestId);
      if (p && p.sessionId === input.sessionId && p.turnId === input.turnId) {
        p.settle({ decision: input.decision, scope: input.scope, timedOut: false });
        return true;
      }
      const r = resolved.get(input.requestId);
      if (r && r.sessionId === input.sessionId && r.turnId === input.turnId) {
        if (r.timedOut) return false;
        throw new SvcError('confirmation_already_resolved', {
          message: `confirmation ${input.requestId} was already resolved; this answer was not applied`,
          details: { request_id: input.requestId, applied: false },
        });
      }
      throw new SvcError('confirmation_not_found', {
        message: `no confirmation ${input.requestId} on turn ${input.turnId}`,
      });
    },
  };
}

// --- internal ---

interface Pending {
  sessionId: string;
  turnId: string;
  settle(o: Outcome): void;
}
