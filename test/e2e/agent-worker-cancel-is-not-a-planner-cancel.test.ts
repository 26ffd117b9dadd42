/**
 * A worker's own turn cancelled (REST cancel on the worker session, a cancel frame on the planner's socket
 * naming the worker's turn, or DELETE of the worker) while its planner's
 * turn goes on: delegate.failed and the tool result the planner's model reads say the worker's turn was
 * cancelled and why, not that the planner turn was, and the planner turn carries on to turn.completed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { type RunningFakeProvider, startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer } from '../helpers/agent-server.ts';
import { attach } from '../helpers/ws-client.ts';

let fake: RunningFakeProvider;
let server: AgentServer;
const cleanups: Array<() => unknown> = [];
before(async () => {
  fake = await startFakeProvider();
  server = await startAgentServer(
    { after: (fn) => void cleanups.push(fn) },
    { env: fakeProviderEnv(fake, ['anthropic']) },
  );
});
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
  await fake.close();
});

async function eventsUntil(sid: string, pred: (events: any[]) => boolean): Promise<any[]> {
  for (let i = 0; i < 400; i++) {
    const res = await server.api('GET', `/sessions/${sid}/events?limit=1000`);
    if (pred(res.body.events)) return res.body.events;
    await sleep(25);
  }
  throw new Error('the events never matched');
}

const HOW = {
  cancel: 'a REST cancel of the worker turn',
  socket: "a cancel frame on the planner's socket naming the worker turn",
  delete: 'DELETE of the worker session',
} as const;

for (const how of ['cancel', 'socket', 'delete'] as const) {
  test(`${HOW[how]} fails the delegation as the worker's cancel; the planner turn completes`, async () => {
    const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
    // the planner's socket shows the worker's events (include_worker_sessions), its turn id among them
    const stream = how === 'socket' ? await attach(server, sid) : undefined;
    stream?.send({ type: 'subscribe', filter: { include_worker_sessions: true }, since: null });
    await stream?.next((f) => f.type === 'subscribe_ack');
    fake.script([
      { toolUses: [{ name: 'delegate', input: { task: 'wait for me' } }] },
      'hang',
      { text: 'planner goes on' },
    ]);
    const turnId = (
      await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'go' }] })
    ).body.turn_id;
    const started = (await eventsUntil(sid, (e) => e.some((x) => x.type === 'delegate.started'))).find(
      (x) => x.type === 'delegate.started',
    );
    const workerId = started.payload.worker_session_id;
    const workerTurn = (await eventsUntil(workerId, (e) => e.some((x) => x.type === 'llm.call_started')))[0]
      .turn_id;
    if (stream) {
      const seen = await stream.next(
        (f) => f.type === 'event' && f.event.type === 'llm.call_started' && f.event.session_id === workerId,
      );
      stream.send({ type: 'cancel', turn_id: seen.event.turn_id, reason: 'enough' });
      stream.send({ type: 'ping', nonce: 'after-cancel' });
      // frames are answered in order: the cancel was taken (no error frame) before the pong
      await stream.next((f) => f.type === 'pong');
      assert.deepEqual(
        stream.frames.filter((f) => f.type === 'error'),
        [],
      );
    } else {
      const res =
        how === 'cancel'
          ? await server.api('POST', `/sessions/${workerId}/turns/${workerTurn}/cancel`, { reason: 'enough' })
          : await server.api('DELETE', `/sessions/${workerId}`, {});
      assert.equal(res.status, how === 'cancel' ? 202 : 200, JSON.stringify(res.body));
    }

    const events = await eventsUntil(sid, (e) =>
      e.some((x) => x.turn_id === turnId && x.type === 'turn.completed'),
    );
    const reason = how === 'delete' ? 'session_ended' : 'enough';
    const failed = events.find((x) => x.type === 'delegate.failed');
    assert.equal(failed.payload.failure_mode, 'cancelled_by_user');
    assert.doesNotMatch(failed.payload.message, /planner turn was cancelled/);
    assert.match(failed.payload.message, new RegExp(`worker's turn was cancelled \\(${reason}\\)`));
    assert.equal(
      events.some((x) => x.turn_id === turnId && x.type === 'turn.cancelled'),
      false,
    );
    assert.equal(events.find((x) => x.type === 'turn.completed').payload.status, 'completed');

    const messages = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
    const result = messages.flatMap((m: any) => m.content).find((b: any) => b.type === 'tool_result');
    assert.match(result.content, new RegExp(`worker's turn was cancelled \\(${reason}\\)`));
    stream?.close();
  });
}
