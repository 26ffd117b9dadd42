/**
 * Standard output that cannot take the answer: a reader that already went away (`svc … | head`, EPIPE) is
 * the reader's choice and ends the command quietly; a full disk (ENOSPC) is one sentence on stderr and
 * exit 1. Neither is Node's unhandled-'error' stack trace (DECISIONS §2).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensureBuilt, isolatedEnv, makeTempDir, SVC_BIN } from '../helpers/svc.ts';

const tmp = makeTempDir('svc-stdout-');
test.after(() => tmp.cleanup());
const env = isolatedEnv(tmp.dir);
// list-keys needs a keystore to list (a missing one is an error on stderr, not output)
writeFileSync(join(tmp.dir, 'keys.json'), '{"keys":[]}\n', { mode: 0o600 });

function run(command: string, stdout: 'pipe' | number): Promise<{ code: number | null; stderr: string }> {
  ensureBuilt();
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], { env, stdio: ['ignore', stdout, 'pipe'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

const svc = `"${process.execPath}" "${SVC_BIN}"`;
const COMMANDS = ['--help', `gateway list-keys --keystore ${join(tmp.dir, 'keys.json')}`];

test('a reader that closed the pipe first ends the command without a stack trace', async () => {
  for (const args of COMMANDS) {
    // the reader closes its end at once, so every write of svc meets EPIPE
    const r = await run(`${svc} ${args} | (exec 0<&-; sleep 2)`, 'pipe');
    assert.equal(r.code, 0, `${args}: ${r.stderr}`);
    assert.equal(r.stderr, '', args);
  }
});

test('standard output on a full disk is one sentence on stderr and exit 1', {
  skip: !existsSync('/dev/full') && 'no /dev/full',
}, async () => {
  for (const args of COMMANDS) {
    const full = openSync('/dev/full', 'w');
    try {
      const r = await run(`exec ${svc} ${args}`, full);
      assert.equal(r.code, 1, `${args}: ${r.stderr}`);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `${args}: ${r.stderr}`);
      assert.match(lines[0], /^svc: Cannot write to standard output \(ENOSPC\)/);
      // the command did its work: the sentence says so rather than to run it again (a backup would be refused)
      assert.match(lines[0], /the command ran to its end and only what it printed is lost/);
    } finally {
      closeSync(full);
    }
  }
});

test('a token that cannot be written says which key was made and what to do, not to run the command again', {
  skip: !existsSync('/dev/full') && 'no /dev/full',
}, async () => {
  const keys = `--keystore ${join(tmp.dir, 'token-keys.json')} --db-path ${join(tmp.dir, 'token.db')}`;
  const full = openSync('/dev/full', 'w');
  try {
    // before: 'Cannot write to standard output (ENOSPC); … run the command again', which issues one more key
    const issued = await run(`exec ${svc} gateway issue-key --name lost --workspace /tmp ${keys}`, full);
    assert.equal(issued.code, 1, issued.stderr);
    const key =
      /^svc: Key (gk_\w+) was issued, but its token could not be written to standard output \(ENOSPC\), and it is shown only once; revoke the key with `svc gateway revoke-key \1` and issue another where the output can be read\.\n$/.exec(
        issued.stderr,
      )?.[1];
    assert.ok(key, issued.stderr);
    const rotated = await run(`exec ${svc} gateway rotate-key ${key} ${keys}`, full);
    assert.equal(rotated.code, 1, rotated.stderr);
    assert.match(
      rotated.stderr,
      new RegExp(
        `^svc: Key ${key} was rotated to (gk_\\w+), but the new token could not be written to standard output \\(ENOSPC\\), and it is shown only once; rotate \\1 in turn with \`svc gateway rotate-key \\1\` for a token you can read \\(${key} works until [^)]+Z\\)\\.\\n$`,
      ),
    );
  } finally {
    closeSync(full);
  }
});
