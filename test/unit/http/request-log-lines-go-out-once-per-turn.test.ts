import assert from 'node:assert/strict';
import { test } from 'node:test';
import { writeLinesPerTurn } from '#src/http/request-log.ts';

test('request-log lines of answers released together go out as one write, in order; a later line as its own', async () => {
  const writes: string[] = [];
  const line = writeLinesPerTurn((text) => writes.push(text));
  // answers waiting on one group commit resume together
  let commit = () => {};
  const committed = new Promise<void>((resolve) => {
    commit = resolve;
  });
  const answers = ['a', 'b', 'c'].map(async (name) => {
    await committed;
    line(`${name}\n`);
  });
  commit();
  await Promise.all(answers);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(writes, ['a\nb\nc\n']);
  line('d\n');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(writes, ['a\nb\nc\n', 'd\n']);
});
