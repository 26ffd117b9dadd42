import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ATTACH_TOKEN_TTL_MS, createAttachTokens } from '#src/agent/sessions/attach-tokens.ts';
import { createStreamServer } from '#src/agent/ws/stream-server.ts';
import { createBus } from '#src/events/bus.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { systemClock } from '#src/lib/time.ts';
import { createAgentAppFixture } from '../agent-app-fixture.ts';

test('a token presented after its 60 seconds is refused with 401 invalid_attach_token naming the expiry', async (t) => {
  let nowUs = systemClock.nowUs();
  const newId = createIdFactory();
  const clock = { nowUs: () => nowUs };
  const stream = createStreamServer({
    bus: createBus({ newId, clock, log: silentLogger }),
    clock,
    newId,
    log: silentLogger,
    flush: async () => {},
    queueLimit: 10,
    pingIntervalMs: 1000,
  });
  const attachTokens = createAttachTokens({ clock });
  const fx = await createAgentAppFixture(t, { attachTokens, stream });
  const created = (await (await fx.call('POST', '/sessions', { workspace_path: fx.workspace })).json()) as {
    id: string;
  };
  const sid = created.id;
  const { token } = attachTokens.issue(sid);
  nowUs += ATTACH_TOKEN_TTL_MS * 1000;
  const res = await fx.call('GET', `/sessions/${sid}/stream?attach=${token}`, undefined, {
    upgrade: 'websocket',
    connection: 'Upgrade',
  });
  assert.equal(res.status, 401);
  const body = (await res.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'invalid_attach_token');
  assert.match(body.error.message, /expired/);
});
