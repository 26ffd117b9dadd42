/**
 * `svc routing explain --input-tokens` / `--messages` past 2^53 were taken and printed rounded
 * (`input_tokens≈100000000000000000000`, a bucket of 147573952589676410000): a number the request could never
 * carry. They are now a usage error (exit 2, one sentence naming the flag), like the other malformed counts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isolatedEnv, makeTempDir, runSvc } from '../helpers/svc.ts';

test('explain refuses a count above 2^53 with exit 2 naming the flag; the largest exact one is shown as given', async (t) => {
  const tmp = makeTempDir('svc-explain-counts-');
  t.after(tmp.cleanup);
  const env = isolatedEnv(tmp.dir, { ANTHROPIC_API_KEY: 'sk-ant-test' });
  const explain = (...flags: string[]) =>
    runSvc(['routing', 'explain', '--model', 'auto', '--text', 'hi', ...flags], { env });

  for (const flag of ['--input-tokens', '--messages']) {
    const run = await explain(flag, '99999999999999999999');
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stdout, '');
    assert.equal(
      run.stderr.trim(),
      `svc: ${flag} must be a whole number up to 9007199254740991, not "99999999999999999999".`,
    );
  }
  const largest = await explain('--input-tokens', '9007199254740991');
  assert.equal(largest.code, 0, largest.stderr);
  assert.match(largest.stdout, /^request .* input_tokens≈9007199254740991 messages=1$/m);
});
