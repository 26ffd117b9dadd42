/**
 * A second SIGTERM/SIGINT while `svc serve` stops (an operator's second Ctrl-C during the 30 s wait for a
 * request in flight) cuts that request off but still ends like a graceful stop: the running turn's closing
 * events are in the trace store, "agent server stopped" is logged, exit 0. It used to fall through to
 * Node's default action: the process died by the signal, without flushing or closing the store.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { after, test } from 'node:test';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer, withStore } from '../helpers/agent-server.ts';

const fake = await startFakeProvider();
after(() => fake.close());

async function waitFor(what: string, probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const [first, second] of [
  ['SIGTERM', 'SIGTERM'],
  ['SIGINT', 'SIGINT'],
] as const) {
  test(`${second} after ${first}: the request in flight is cut off, the turn's end is flushed, exit 0`, {
    timeout: 60_000,
  }, async (t) => {
    const server = await startAgentServer(t, {
      env: fakeProviderEnv(fake, ['anthropic']),
    });
    const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
    fake.script([{ hang: true }]);
    const turn = (
      await server.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'hi' }] })
    ).body.turn_id;
    const turnEvents = () =>
      withStore(server.db, (db) =>
        db.prepare('SELECT type, payload FROM events WHERE turn_id = ? ORDER BY id').all(turn),
      ) as Array<{ type: string; payload: string }>;
    await waitFor('the model call', () => turnEvents().some((e) => e.type === 'llm.call_started'));

    // a request whose body never completes: the stop waits for it (up to 30 s)
    const { hostname, port } = new URL(server.url);
    const slow = connect(Number(port), hostname);
    t.after(() => slow.destroy());
    await once(slow, 'connect');
    slow.write(
      `POST /sessions HTTP/1.1\r\nHost: ${hostname}:${port}\r\ncontent-type: application/json\r\n` +
        'content-length: 1000\r\n\r\n{"workspace_path":',
    );
    // cut off with a FIN or, when the server had not yet read all it was sent, a reset: either closes it
    let slowError: NodeJS.ErrnoException | undefined;
    slow.on('error', (err) => {
      slowError = err;
    });
    const slowClosed = new Promise((resolve) => slow.once('close', resolve));
    await new Promise((r) => setTimeout(r, 100)); // the request reaches the server before the stop

    server.svc.child.kill(first);
    await waitFor('the stop to begin', () => server.svc.output().stderr.includes('agent server stopping'));
    // the running turn is cancelled first; the stop then waits for the request in flight
    await waitFor('turn.cancelled', () => turnEvents().some((e) => e.type === 'turn.cancelled'));
    const exit = await server.svc.stop(second);

    const stderr = server.svc.output().stderr;
    assert.equal(exit, 0, `exit ${exit}, signal ${server.svc.child.signalCode}\n${stderr}`);
    assert.match(stderr, /second stop signal; cutting off the in-flight requests now/);
    assert.match(stderr, /agent server stopped/);
    await slowClosed;
    assert.ok(slowError === undefined || slowError.code === 'ECONNRESET', String(slowError));
    const types = turnEvents().map((e) => e.type);
    assert.deepEqual(types.slice(-2), ['llm.call_failed', 'turn.cancelled']);
    const end = JSON.parse(turnEvents().at(-1)!.payload);
    assert.equal(end.reason, 'server_shutdown');
    // the store was closed cleanly: a new start finds no turn left open
    const again = await startAgentServer(t, { home: server.home });
    await waitFor('the restart', () => /agent server listening/.test(again.svc.output().stderr));
    assert.doesNotMatch(again.svc.output().stderr, /turns left open/);
  });
}
