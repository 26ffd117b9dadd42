/**
 * @module The end of a turn the loop ran: the session follows the turn's model (unless pinned or overridden),
 * the turn's cost is added to the session and its claim released, then turn.completed or turn.cancelled is
 * published and committed. Each write waits out a store that cannot be reached, so a turn ends exactly once.
 */
import { type Decimal, formatDecimal } from '../../lib/decimal.ts';
import { formatUs } from '../../lib/time.ts';
import type { Routed } from '../../llm/runner.ts';
import type { LoopOutcome } from '../loop.ts';
import { finishTurn, setActiveModel } from '../sessions/store.ts';
import { whileStoreAway } from '../store-wait.ts';
import type { StartTurnDeps, StartTurnInput, TurnHandle } from './start-turn.ts';

/** Ends a turn the loop ran: the session's model and counters written, then its end event. */
export async function endTurn(
  deps: StartTurnDeps,
  input: StartTurnInput,
  handle: TurnHandle,
  routed: Routed,
  outcome: LoopOutcome,
  startedEventId: string,
): Promise<void> {
  const base = {
    actor: 'agent',
    session_id: handle.sessionId,
    turn_id: handle.turnId,
    parent_event_id: startedEventId,
  } as const;
  const cost: Decimal = outcome.cost;
  const now = formatUs(deps.clock.nowUs());
  // the session follows the model its turns run on, unless the user pinned one or this turn overrode it
  // each write waits out a store that cannot be reached: the turn ends once it is back, exactly once
  if (input.session.sticky !== 1 && input.override === null && input.worker === null)
    await whileStoreAway(deps.log, 'turn end', () =>
      setActiveModel(deps.db, handle.sessionId, routed.model.id, now),
    );
  // released before the end event, so a client that answers turn.completed with a new turn is not refused
  await input.release(handle, async () => {
    await whileStoreAway(deps.log, 'turn end', () =>
      finishTurn(deps.db, handle.sessionId, {
        turnId: handle.turnId,
        costDelta: formatDecimal(cost),
        now,
        routingPolicyVersion: routed.decision.policy_version,
      }),
    );
  });
  input.onEnd(handle, outcome);
  const common = { cost_usd: formatDecimal(cost), model: routed.model.id, steps: outcome.steps };
  const published =
    outcome.status === 'cancelled'
      ? deps.bus.publish({
          ...base,
          type: 'turn.cancelled',
          payload: { reason: handle.cancelReason ?? 'cancelled', ...common },
        })
      : deps.bus.publish({
          ...base,
          type: 'turn.completed',
          payload: {
            status: outcome.status,
            stop_reason: outcome.stopReason,
            error_code: outcome.errorCode,
            error_class: outcome.errorClass,
            ...common,
          },
        });
  await published.committed;
}
