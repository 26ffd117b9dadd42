/**
 * README: "Errors are one sentence on stderr; set `SVC_DEBUG=1` for a stack trace". An error svc raises
 * itself (a missing keystore, a refused restore…) printed its stack only when it wrapped another error,
 * so SVC_DEBUG=1 showed nothing more for most of them.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { isolatedEnv, makeTempDir, runSvc } from '../helpers/svc.ts';

const tmp = makeTempDir('svc-debug-');
test.after(() => tmp.cleanup());

test('SVC_DEBUG=1 adds the stack under the one sentence; without it the sentence stands alone', async () => {
  const keystore = join(tmp.dir, 'none', 'keys.json');
  const args = ['gateway', 'list-keys', '--keystore', keystore];
  const plain = await runSvc(args, { env: { ...isolatedEnv(tmp.dir), SVC_DEBUG: '' } });
  assert.equal(plain.code, 1);
  const lines = plain.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, plain.stderr);
  assert.match(lines[0], /^svc: There is no keystore at /);

  const debug = await runSvc(args, { env: { ...isolatedEnv(tmp.dir), SVC_DEBUG: '1' } });
  assert.equal(debug.code, 1);
  const debugLines = debug.stderr.trimEnd().split('\n');
  assert.equal(debugLines[0], lines[0]);
  assert.ok(
    debugLines.slice(1).some((l) => /^\s+at /.test(l)),
    `a stack follows the sentence:\n${debug.stderr}`,
  );
});

test('SVC_DEBUG takes true/yes/on and false/no/off as 1 and 0; any other value refuses every command', async () => {
  const keystore = join(tmp.dir, 'none', 'keys.json');
  const args = ['gateway', 'list-keys', '--keystore', keystore];
  const on = await runSvc(args, { env: { ...isolatedEnv(tmp.dir), SVC_DEBUG: 'True' } });
  assert.equal(on.code, 1);
  assert.ok(/^\s+at /m.test(on.stderr), `SVC_DEBUG=True adds the stack:\n${on.stderr}`);
  const off = await runSvc(args, { env: { ...isolatedEnv(tmp.dir), SVC_DEBUG: 'off' } });
  assert.equal(off.code, 1);
  assert.equal(off.stderr.trimEnd().split('\n').length, 1, off.stderr);
  assert.match(off.stderr, /^svc: There is no keystore at /);

  // read as off before: a user asking for stack traces got none and was not told why
  // the servers' flags are bad too, so that a build that ignores SVC_DEBUG exits at once rather than serving
  const servers = [['gateway'], ['serve', '--port', 'abc'], ['forward', '--listen', 'nowhere']];
  for (const command of [args, ...servers, ['analytics', 'cost']]) {
    const r = await runSvc(command, { env: { ...isolatedEnv(tmp.dir), SVC_DEBUG: 'verbose' } });
    assert.equal(r.code, 1, `svc ${command.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^svc: SVC_DEBUG must be 1, true, yes or on .*not "verbose"; fix or unset it/);
  }
});
