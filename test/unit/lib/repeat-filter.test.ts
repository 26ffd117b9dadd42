import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRepeatFilter } from '#src/lib/log.ts';

test('a repeated warning goes out once per interval with the count it held back; a new text at once', () => {
  let now = 0;
  const pass = createRepeatFilter(30_000, () => now);
  assert.deepEqual(pass('disk full'), { emit: true, held: 0 });
  // a checkpoint every 500 ms on a full disk: held back, counted
  for (let i = 0; i < 59; i++) {
    now += 500;
    assert.equal(pass('disk full').emit, false);
  }
  now += 500;
  assert.deepEqual(pass('disk full'), { emit: true, held: 59 });
  now += 500;
  assert.deepEqual(pass('readonly'), { emit: true, held: 0 }, 'another failure is news');
  now += 500;
  assert.equal(pass('readonly').emit, false);
});
