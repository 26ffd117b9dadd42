/**
 * The dashboard's empty state tells a newcomer which command issues a key: that command, as printed on the
 * page, runs against the real CLI and prints a token (it once lacked the required --workspace and exited 2).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { renderEmpty } from '../../src/analytics/dashboard/render.ts';
import { isolatedEnv, makeTempDir, runSvc } from '../helpers/svc.ts';

test('the issue-key command on the empty dashboard runs as printed', async (t) => {
  const tmp = makeTempDir('svc-hint-');
  t.after(tmp.cleanup);
  const line = renderEmpty()
    .split('\n')
    .map((l) => l.replace(/^\s*<pre>/, ''))
    .find((l) => l.startsWith('svc gateway issue-key'));
  assert.ok(line, 'the empty state names an issue-key command');
  const args = line
    .replace(/#.*$/, '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map((a) => a.replace(/^~(?=\/)/, tmp.dir));
  const r = await runSvc([...args, '--keystore', join(tmp.dir, 'keys.json')], { env: isolatedEnv(tmp.dir) });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^token: gw_\w+$/m);
});
