/**
 * @module Delegation (issue 10): a `delegate` tool_use creates a worker session (`is_worker`,
 * `parent_session_id`) and runs one turn there, routed by slot 5 to the requested model (only
 * `can_delegate` models), with delegate.started, then delegate.completed (result text, cost) or
 * delegate.failed (`failure_mode`), published on the planner's turn, and ends the worker session (one turn).
 * The worker's cost is the planner's.
 */

import type { Kysely } from 'kysely';
import type { ContentBlock } from '../canonical/message.ts';
import type { Bus } from '../events/bus.ts';
import { type Decimal, formatDecimal, ZERO } from '../lib/decimal.ts';
import { isSvcError } from '../lib/errors.ts';
import type { NewId } from '../lib/ids.ts';
import type { Logger } from '../lib/log.ts';
import { type Clock, formatUs } from '../lib/time.ts';
import type { ModelRegistry } from '../models/registry.ts';
import type { PolicyStore } from '../routing/load-policy.ts';
import type { Database, SessionRow } from '../store/schema.ts';
import type { LoopOutcome } from './loop.ts';
import { createSession, endSession } from './sessions/store.ts';
import { whileStoreAway } from './store-wait.ts';
import type { DelegateInput } from './tool-dispatch.ts';
import type { ToolResult } from './tools/tool.ts';
import type { Started, StartTurnInput } from './turns/start-turn.ts';

export interface DelegationDeps {
  db: Kysely<Database>;
  bus: Bus;
  newId: NewId;
  clock: Clock;
  log: Logger;
  registry: ModelRegistry;
  policy: PolicyStore;
  startWorkerTurn(
    session: SessionRow,
    content: ContentBlock[],
    worker: NonNullable<StartTurnInput['worker']>,
  ): Promise<Started>;
  plannerApprovals(sessionId: string): Set<string>;
}

export async function runDelegation(
  deps: DelegationDeps,
  input: DelegateInput,
): Promise<{ result: ToolResult; cost: Decimal }> {
  const base = { actor: 'agent', session_id: input.plannerSessionId, turn_id: input.plannerTurnId } as const;
  const policy = deps.policy.current();
  const requested = input.model ?? policy.tiers.fast ?? null;
  const target =
    requested === null ? undefined : deps.registry.get(policy.resolveRef(requested) ?? requested);
  // the delegation's end is a child of its delegate.started (none when it failed before a worker existed)
  let startedId: string | null = null;
  const failed = (failure_mode: string, message: string, workerId: string | null, cost = ZERO) => {
    deps.bus.publish({
      ...base,
      type: 'delegate.failed',
      parent_event_id: startedId,
      payload: {
        tool_use_id: input.toolUseId,
        worker_session_id: workerId,
        failure_mode,
        message,
        cost_usd: formatDecimal(cost),
      },
    });
    const error_class =
      failure_mode === 'cancelled_by_user'
        ? 'cancelled'
        : failure_mode === 'model_not_configured' || failure_mode === 'model_not_delegable'
          ? 'invalid_input' // the model the call named: the model can correct its own input
          : 'execution_error';
    return { result: { ok: false as const, error_class, message }, cost } as const;
  };
  if (input.model !== null && !target)
    return failed(
      'model_not_configured',
      `${input.model} is not a model id, alias or tier of the registry; the delegate tool's model must name one`,
      null,
    );
  if (requested !== null && target && !target.can_delegate)
    return failed(
      'model_not_delegable',
      `${target.id} cannot take delegated work (can_delegate is false)`,
      null,
    );

  const now = formatUs(deps.clock.nowUs());
  const worker = await createSession(deps.db, {
    id: deps.newId('sess_'),
    workspace_path: input.workspace,
    workspace_root: input.root,
    active_model: target?.id ?? policy.globalDefault,
    routing_policy_version: policy.version,
    is_worker: true,
    parent_session_id: input.plannerSessionId,
    now,
  });
  startedId = deps.bus.publish({
    ...base,
    type: 'delegate.started',
    payload: {
      tool_use_id: input.toolUseId,
      worker_session_id: worker.id,
      task: input.task,
      requested_model: input.model,
      model: worker.active_model,
    },
  }).event.id;
  let started: Started;
  let outcome: LoopOutcome;
  try {
    started = await deps.startWorkerTurn(worker, [{ type: 'text', text: input.task }], {
      delegateModel: requested,
      plannerApprovals: deps.plannerApprovals(input.plannerSessionId),
      parentSignal: input.signal,
    });
    outcome = await started.handle.done;
  } catch (err) {
    const code = isSvcError(err) ? err.code : 'internal_error';
    return failed(code === 'routing_failed' ? 'routing_failed' : 'worker_failed', errorText(err), worker.id);
  } finally {
    // a worker runs one turn: ended after it, so no client can make it a planner that delegates and writes;
    // waits out a store that cannot be reached or written, as the turn's own writes do
    const ended = formatUs(deps.clock.nowUs());
    await whileStoreAway(deps.log, 'worker session end', () => endSession(deps.db, worker.id, ended));
  }
  if (outcome.status === 'cancelled')
    return failed(
      'cancelled_by_user',
      // the worker's own turn can be cancelled (REST or a socket on the worker, DELETE of the worker) while
      // the planner's goes on: the model and the trace must not read that the planner was cancelled
      input.signal.aborted
        ? 'the planner turn was cancelled during delegation'
        : `the worker's turn was cancelled (${started.handle.cancelReason ?? 'cancelled'}); the task was not finished`,
      worker.id,
      outcome.cost,
    );
  if (outcome.status === 'failed')
    return failed(
      'worker_failed',
      `the worker turn failed (${outcome.errorCode ?? 'error'})`,
      worker.id,
      outcome.cost,
    );
  deps.bus.publish({
    ...base,
    type: 'delegate.completed',
    parent_event_id: startedId,
    payload: {
      tool_use_id: input.toolUseId,
      worker_session_id: worker.id,
      model: started.routed.model.id,
      result: outcome.finalText,
      cost_usd: formatDecimal(outcome.cost),
      steps: outcome.steps,
    },
  });
  return {
    result: { ok: true, output: outcome.finalText || '(the worker answered with no text)' },
    cost: outcome.cost,
  };
}

// --- internal ---

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
