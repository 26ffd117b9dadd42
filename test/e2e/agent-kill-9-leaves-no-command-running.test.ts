/**
 * A server killed with SIGKILL while run_command runs cannot kill the command's process group itself; the
 * group's watchdog does, so the command of a turn the restart records as cancelled (server_restart) does not
 * go on running in the workspace.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { type RunningFakeProvider, startFakeProvider } from '../fake-provider/server.ts';
import { type AgentServer, startAgentServer } from '../helpers/agent-server.ts';
import { diesSoon, isRunning } from '../helpers/process-alive.ts';

let fake: RunningFakeProvider;
before(async () => {
  fake = await startFakeProvider();
});
after(() => fake.close());

async function eventsUntil(server: AgentServer, sid: string, pred: (types: any[]) => boolean) {
  for (let i = 0; i < 400; i++) {
    const res = await server.api('GET', `/sessions/${sid}/events?limit=1000`);
    if (pred(res.body.events)) return res.body.events as any[];
    await sleep(25);
  }
  throw new Error('the events never matched');
}

test('kill -9 while run_command runs: the command and its group die with the server, the restart cancels the turn', async (t) => {
  const first = await startAgentServer(t, { env: fakeProviderEnv(fake, ['anthropic']) });
  const sid = (await first.api('POST', '/sessions', { workspace_path: first.workspace })).body.id;
  fake.script([
    {
      toolUses: [
        { name: 'run_command', input: { command: 'echo $$ > shell.pid; sleep 30; echo late > late.txt' } },
      ],
    },
  ]);
  const turnId = (
    await first.api('POST', `/sessions/${sid}/turns`, { content: [{ type: 'text', text: 'run' }] })
  ).body.turn_id;
  const asked = (
    await eventsUntil(first, sid, (e) => e.some((x) => x.type === 'tool.confirmation_requested'))
  ).find((x) => x.type === 'tool.confirmation_requested');
  const answer = await first.api(
    'POST',
    `/sessions/${sid}/turns/${turnId}/confirmations/${asked.payload.request_id}`,
    {
      decision: 'allow',
    },
  );
  assert.equal(answer.status, 200);
  const pidFile = join(first.workspace, 'shell.pid');
  while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') await sleep(20);
  const shellPid = Number(readFileSync(pidFile, 'utf8'));
  assert.equal(isRunning(shellPid), true, 'the command runs before the kill');

  await first.svc.stop('SIGKILL');
  assert.equal(await diesSoon(shellPid), true, 'the command outlived the killed server');

  const second = await startAgentServer(t, { env: fakeProviderEnv(fake, ['anthropic']), home: first.home });
  const events = await eventsUntil(second, sid, (e) => e.some((x) => x.type === 'turn.cancelled'));
  assert.equal(events.find((x) => x.type === 'turn.cancelled').payload.reason, 'server_restart');
  assert.equal(existsSync(join(first.workspace, 'late.txt')), false);
});
