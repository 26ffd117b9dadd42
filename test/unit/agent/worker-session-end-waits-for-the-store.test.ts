/**
 * A delegation ends its worker session after the worker's one turn. That write used to be the only one of the
 * planner's turn not to wait out a store that cannot be written (here another process holding the SQLite
 * write lock past the busy timeout, as an operator's sqlite3 left in a transaction does): the worker session
 * stayed open and the planner's turn failed with internal_error. It now waits as the turn's other writes do.
 * The worker's turn is a double of startTurn's contract; the store and its lock are real.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { runDelegation } from '#src/agent/delegate.ts';
import { createSession, getSession } from '#src/agent/sessions/store.ts';
import type { Started } from '#src/agent/turns/start-turn.ts';
import { createBus } from '#src/events/bus.ts';
import { ZERO } from '#src/lib/decimal.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { createLogger, silentLogger } from '#src/lib/log.ts';
import { formatUs, systemClock } from '#src/lib/time.ts';
import { loadModelRegistry } from '#src/models/registry.ts';
import { loadRoutingPolicy } from '#src/routing/load-policy.ts';
import { openStore } from '#src/store/open.ts';

test("a store that refuses the worker session's end: the delegation waits and ends it once it can", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-delegate-'));
  const path = join(dir, 'svc.db');
  const store = await openStore({ engine: 'sqlite', path, busyTimeoutMs: 20 });
  const lock = new DatabaseSync(path);
  t.after(async () => {
    if (lock.isOpen) lock.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const newId = createIdFactory();
  const registry = loadModelRegistry(undefined);
  const policy = loadRoutingPolicy({ path: undefined, registry, log: silentLogger });
  const now = formatUs(systemClock.nowUs());
  const planner = await createSession(store.kysely, {
    id: newId('sess_'),
    workspace_path: dir,
    active_model: policy.current().globalDefault,
    routing_policy_version: policy.current().version,
    now,
  });
  const warnings: string[] = [];
  const log = createLogger({
    write: (line) => {
      warnings.push(line);
      // the delegation said it waits: the lock is released, as the operator's shell ends its transaction
      if (lock.isTransaction) lock.exec('COMMIT');
    },
    level: 'warn',
  });
  let workerId = '';
  const outcome = await runDelegation(
    {
      db: store.kysely,
      bus: createBus({ newId, clock: systemClock, log: silentLogger }),
      newId,
      clock: systemClock,
      log,
      registry,
      policy,
      async startWorkerTurn(session) {
        workerId = session.id;
        lock.exec('BEGIN IMMEDIATE'); // held when the worker's turn is done and its session is to end
        const done = {
          status: 'completed',
          cost: ZERO,
          stopReason: 'end_turn',
          finalText: 'summarised',
          steps: 1,
          errorCode: null,
          errorClass: null,
        } as const;
        const routed = { model: { id: session.active_model } } as Started['routed'];
        return {
          handle: {
            turnId: newId(),
            sessionId: session.id,
            controller: new AbortController(),
            cancelReason: null,
            done: Promise.resolve(done),
          },
          userMessageId: newId(),
          submittedAt: now,
          routed,
        };
      },
      plannerApprovals: () => new Set(),
    },
    {
      task: 'summarise',
      model: null,
      toolUseId: 'toolu_1',
      plannerSessionId: planner.id,
      plannerTurnId: newId(),
      workspace: dir,
      root: dir,
      signal: new AbortController().signal,
    },
  );
  assert.deepEqual(outcome.result, { ok: true, output: 'summarised' });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /the trace store cannot be written; the turn waits for it/);
  assert.match(warnings[0]!, /worker session end/);
  const worker = await getSession(store.kysely, workerId);
  assert.notEqual(worker?.ended_at, null, 'the worker session has ended');
});
