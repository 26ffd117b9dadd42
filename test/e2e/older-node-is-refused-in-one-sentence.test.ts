import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { collectOutput, ensureBuilt, isolatedEnv, makeTempDir, ROOT, SVC_BIN } from '../helpers/svc.ts';

const tmp = makeTempDir();
test.after(() => tmp.cleanup());

/**
 * README Set-up: svc runs on the Node 24 that `npm ci` installs. `bin/svc` started by an older system
 * node (`node bin/svc`, or `bin/svc` through its `#!/usr/bin/env node`) used to fail on whatever module
 * that Node lacks ("unexpected error: No such built-in module: node:sqlite"); it now says which Node it
 * needs and how to run it, exit 1. The older Node is simulated by a preload that reports 22.3.0.
 */
test('bin/svc on a Node older than 24 exits 1 with one sentence naming the Node it needs', async () => {
  ensureBuilt();
  const pretend =
    'data:text/javascript,Object.defineProperty(process,"versions",{value:{...process.versions,node:"22.3.0"}})';
  const child = spawn(process.execPath, ['--import', pretend, SVC_BIN, '--version'], {
    cwd: ROOT,
    env: isolatedEnv(tmp.dir),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const r = await collectOutput(child, 30_000);
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(
    lines[0],
    /^svc: this is Node\.js 22\.3\.0 and svc needs Node\.js 24 or newer; run it as npx svc/,
  );
});
