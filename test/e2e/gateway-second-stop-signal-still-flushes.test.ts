/**
 * A second SIGTERM/SIGINT while `svc gateway` drains (an operator's second Ctrl-C) cuts the in-flight
 * requests off at once but still ends like a graceful stop: the cut call's events reach the trace store
 * (llm.call_completed with error_class cancelled, turn.completed), "gateway stopped" is logged, exit 0.
 * It used to fall through to Node's default action: the process died by the signal and flushed nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

async function waitFor(what: string, probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const [first, second] of [
  ['SIGTERM', 'SIGINT'],
  ['SIGINT', 'SIGINT'],
] as const) {
  test(`${second} after ${first}: the hanging request is cut off, its trace is flushed, exit 0`, {
    timeout: 60_000,
  }, async (t) => {
    const stack = await startGatewayStack();
    t.after(() => stack.stop());
    const { gw, fake } = stack;

    fake.script(['hang']); // the upstream never answers: only a cut-off ends this request
    const answer = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai:gpt-5-mini', messages: [{ role: 'user', content: 'hi' }] }),
    }).then(
      (res) => res.status,
      () => 'connection closed',
    );
    await waitFor('the upstream request', () => fake.requests.length === 1);

    gw.child.kill(first);
    await waitFor('the drain to start', () => gw.output().stderr.includes('gateway stopping'));
    const exit = await gw.stop(second);

    assert.equal(exit, 0, `exit ${exit}, signal ${gw.child.signalCode}\n${gw.output().stderr}`);
    assert.match(gw.output().stderr, /second stop signal; cutting off the in-flight requests now/);
    assert.match(gw.output().stderr, /gateway stopped/);
    // the log says who ended the request: the stop, not the client
    assert.match(gw.output().stderr, /"msg":"request cut off by the stop before its answer"/);
    assert.doesNotMatch(gw.output().stderr, /client disconnected/);
    assert.equal(await answer, 'connection closed');
    await waitFor('the upstream call to be cut', () => fake.requests[0].closedEarlyAt !== undefined);

    const calls = readEvents(stack.files.db).filter(
      (e) => e.type.startsWith('llm.') || e.type === 'turn.completed',
    );
    assert.deepEqual(
      calls.map((e) => e.type),
      ['llm.call_started', 'llm.call_completed', 'turn.completed'],
    );
    assert.equal(calls[1].payload.error_class, 'cancelled');
    assert.equal(calls[1].turn_id, calls[2].turn_id);
  });
}
