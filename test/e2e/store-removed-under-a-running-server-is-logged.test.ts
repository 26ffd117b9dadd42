/**
 * A trace store file removed or replaced under a running server (an operator's `rm`, a restore copied over
 * it without stopping the server) takes every event written after it with it: SQLite goes on writing the
 * file it opened, which no path leads to any more. The server keeps answering and says so once, as an
 * error line naming the store, within a checkpoint interval.
 */
import assert from 'node:assert/strict';
import { renameSync } from 'node:fs';
import { test } from 'node:test';
import { startGatewayStack } from '../helpers/gateway-stack.ts';

/** Resolves with the first stderr JSON line whose msg matches, once the server has written it. */
function stderrLine(stack: Awaited<ReturnType<typeof startGatewayStack>>, msg: RegExp) {
  const find = () =>
    stack.gw
      .output()
      .stderr.split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => msg.test(String(l.msg)));
  return new Promise<Record<string, unknown>>((resolve) => {
    const check = () => {
      const line = find();
      if (!line) return;
      stack.gw.child.stderr?.off('data', check);
      resolve(line);
    };
    stack.gw.child.stderr?.on('data', check);
    check();
  });
}

test('a store moved away under a running gateway is one error line; requests are still answered', {
  timeout: 30_000,
}, async (t) => {
  const stack = await startGatewayStack();
  t.after(() => stack.stop());
  const ask = () =>
    stack.openai.chat.completions.create({
      model: 'openai:gpt-5-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
  await ask();
  renameSync(stack.files.db, `${stack.files.db}.moved`);
  const line = await stderrLine(stack, /^trace store removed while the server runs/);
  assert.equal(line.level, 'error');
  assert.equal(line.path, stack.files.db);
  assert.equal(line.found, 'removed');
  assert.match(String(line.msg), /lost at stop; stop the server, then restore the store from a backup/);
  assert.equal((await ask()).choices[0].finish_reason, 'stop');
  // put back before the stop, whose last checkpoint and close use the file it opened
  renameSync(`${stack.files.db}.moved`, stack.files.db);
  assert.equal(await stack.gw.stop(), 0);
  const lines = stack.gw.output().stderr.match(/trace store (removed|replaced) while/g) ?? [];
  assert.equal(lines.length, 1, 'said once');
});
