/**
 * routing.yaml on a running gateway: SIGHUP re-reads it (the gateway has no /routing/reload; it used to die
 * of the signal, exit 129, as any process does by default). A broken file keeps the policy in force and the
 * gateway serving, with one error line naming the file and the field; a fixed one applies at once.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

const linesOf = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('SIGHUP reloads routing.yaml; a bad file keeps the old policy and the gateway serving', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-hup-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const routing = join(dir, 'routing.yaml');
  writeFileSync(routing, 'rules:\n  - { name: cheap, use: fast }\n');
  const stack = await startGatewayStack({
    env: { SVC_ROUTING_POLICY: routing },
    providers: ['anthropic', 'openai'],
  });
  t.after(() => stack.stop());
  const { gw, openai } = stack;
  const routed = async () => {
    const { response } = await openai.chat.completions
      .create({ model: 'auto', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    return response.headers.get('svc-routed-model');
  };
  const reloads = () => linesOf(gw.output().stderr).filter((l) => String(l.msg).startsWith('routing policy'));

  assert.equal(await routed(), 'anthropic:claude-haiku-4-5');

  writeFileSync(routing, 'rules:\n  - { name: cheap, use: fast }\n    when: x\n');
  gw.child.kill('SIGHUP');
  await until('the error line', () => reloads().some((l) => l.level === 'error'));
  const error = reloads().find((l) => l.level === 'error')!;
  assert.equal(error.file, routing);
  assert.match(String((error.errors as string[])[0]), /^not valid YAML \(line 3, column \d+\)/);
  assert.equal(gw.child.exitCode, null, 'still running');
  assert.equal(gw.child.signalCode, null);
  assert.equal(await routed(), 'anthropic:claude-haiku-4-5', 'the last good policy stays in force');

  writeFileSync(routing, 'rules:\n  - { name: strong, use: deep }\n');
  gw.child.kill('SIGHUP');
  await until('the reload line', () => reloads().some((l) => l.msg === 'routing policy reloaded' && l.valid));
  assert.equal(await routed(), 'anthropic:claude-opus-5-5');

  // a reload to a global default whose provider has no key warns as a start does (it was silent, and every
  // request nothing else claimed became 503 routing_failed)
  const unserved = () =>
    linesOf(gw.output().stderr).filter(
      (l) => l.msg === 'the global default cannot be served: its provider has no key',
    );
  assert.equal(unserved().length, 0);
  writeFileSync(routing, 'global_default: llama\nrules:\n  - { name: strong, use: deep }\n');
  gw.child.kill('SIGHUP');
  await until('the warning', () => unserved().length > 0);
  assert.equal(unserved()[0].global_default, 'openrouter:meta-llama/llama-3.3-70b-instruct');
  assert.equal(unserved()[0].set, 'OPENROUTER_API_KEY');
  assert.equal(gw.child.exitCode, null, 'still running');

  // routing.yaml replaced by a FIFO no one writes: the reload is refused at once, never waits on it
  rmSync(routing);
  execFileSync('mkfifo', [routing]);
  gw.child.kill('SIGHUP');
  const notAFile = () =>
    reloads().filter((l) =>
      (l.errors as string[] | undefined)?.some((e) =>
        e.endsWith('not a regular file: a device, FIFO or socket'),
      ),
    );
  await until('the FIFO refusal', () => notAFile().length > 0);
  assert.equal(notAFile()[0].level, 'error');
  assert.equal(gw.child.exitCode, null, 'still running');
  assert.equal(await gw.stop(), 0, 'SIGTERM still stops it cleanly');
  const last = readEvents(stack.files.db, 'route.decided').at(-1)!;
  const strong = reloads().find((l) => l.msg === 'routing policy reloaded' && l.valid)!;
  assert.equal(last.payload.routing_policy_version, strong.version, 'the policy that decided');
  // DECISIONS §4's chain entry exactly; the rule that proposed it is named beside the chain
  assert.deepEqual((last.payload.chain as unknown[]).at(-1), {
    policy: 'rule',
    model: 'anthropic:claude-opus-5-5',
    verdict: 'accepted',
  });
  assert.equal(last.payload.rule, 'strong');
});
