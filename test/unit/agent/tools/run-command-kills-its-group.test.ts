import assert from 'node:assert/strict';
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { childEnvFrom } from '#src/agent/tools/child-env.ts';
import { COMMAND_CAP_BYTES, runCommandTool } from '#src/agent/tools/run-command.ts';
import { diesSoon } from '../../../helpers/process-alive.ts';
import { failure, okOutput, workspace } from './tools-fixture.ts';

const run = runCommandTool.run;

test('run_command runs sh -c in the workspace and shows the exit code with combined output', async (t) => {
  const { ctx, dir } = await workspace(t, { 'hello.txt': 'hi' });
  const out = okOutput(await run({ command: 'pwd; cat hello.txt; echo oops >&2' }, ctx));
  assert.equal(out, `exit code: 0\n${await realpath(dir)}\nhioops\n`);
  assert.equal(runCommandTool.needsConfirmation, true);
});

test('a non-zero exit is still ok with the exit code (the model decides)', async (t) => {
  const { ctx } = await workspace(t);
  assert.equal(okOutput(await run({ command: 'echo failing; exit 3' }, ctx)), 'exit code: 3\nfailing\n');
});

test('run_command cannot read provider keys or svc settings from its environment', async (t) => {
  const { ctx } = await workspace(t);
  const env = childEnvFrom({
    ...process.env,
    ANTHROPIC_API_KEY: 'sk-ant-secret',
    OPENAI_BASE_URL: 'http://x',
    OPENROUTER_API_KEY: 'or-secret',
    SOME_API_KEY: 'other-secret',
    SVC_GATEWAY_PORT: '1',
    KEEP_ME: 'visible',
  });
  const out = okOutput(await run({ command: 'env' }, { ...ctx, childEnv: env }));
  assert.doesNotMatch(out, /ANTHROPIC|OPENAI|OPENROUTER|_API_KEY|SVC_|secret/);
  assert.match(out, /^KEEP_ME=visible$/m);
  assert.match(out, /^PATH=/m);
});

test('a timed-out command is a timeout failure and its whole process group dies', async (t) => {
  const { ctx, dir } = await workspace(t);
  const res = failure(
    await run({ command: 'sleep 100 & echo $! > pidfile; echo started; wait', timeout_ms: 300 }, ctx),
  );
  assert.equal(res.error_class, 'timeout');
  assert.match(res.message, /timed out after 300 ms/);
  assert.equal(res.output, 'started\n'); // for the model, not the event's message
  const pid = Number(await readFile(path.join(dir, 'pidfile'), 'utf8'));
  assert.ok(pid > 0);
  assert.equal(await diesSoon(pid), true);
});

test('aborting ctx.signal cancels the command and kills its group', async (t) => {
  const { ctx, dir } = await workspace(t);
  const abort = new AbortController();
  const pending = run({ command: 'sleep 100 & echo $! > pidfile; wait' }, { ...ctx, signal: abort.signal });
  const pidfile = path.join(dir, 'pidfile');
  let pid = 0;
  while (!pid) {
    pid = Number(await readFile(pidfile, 'utf8').catch(() => '0'));
    if (!pid) await sleep(20);
  }
  abort.abort();
  const res = failure(await pending);
  assert.equal(res.error_class, 'cancelled');
  assert.equal(await diesSoon(pid), true);
  assert.equal(
    failure(await run({ command: 'echo never' }, { ...ctx, signal: abort.signal })).error_class,
    'cancelled',
  );
});

test('background processes the shell leaves behind are killed when it exits', async (t) => {
  const { ctx, dir } = await workspace(t);
  const out = okOutput(
    await run({ command: 'sleep 100 >/dev/null 2>&1 & echo $! > pidfile; echo done' }, ctx),
  );
  assert.equal(out, 'exit code: 0\ndone\n');
  assert.equal(await diesSoon(Number(await readFile(path.join(dir, 'pidfile'), 'utf8'))), true);
});

test('output over 64 KiB keeps its start and end with a note about the cut middle', async (t) => {
  const { ctx } = await workspace(t);
  const res = await run(
    { command: 'echo FIRST; head -c 200000 /dev/zero | tr "\\0" x; echo; echo LAST' },
    ctx,
  );
  assert.equal(res.ok && res.truncated, true);
  const out = okOutput(res);
  assert.match(
    out,
    /^exit code: 0\nFIRST\nx+\n\[output cut at 64 KiB: \d+ bytes from the middle not shown;[^\]]*\]\nx+\nLAST\n$/,
  );
  assert.ok(Buffer.byteLength(out) <= COMMAND_CAP_BYTES + 300);
});

test('run_command: bad fields are invalid_input naming the field', async (t) => {
  const { ctx } = await workspace(t);
  assert.match(failure(await run({}, ctx)).message, /`command`/);
  assert.match(failure(await run({ command: 'true', timeout_ms: -5 }, ctx)).message, /`timeout_ms`/);
  assert.match(failure(await run({ command: 'true', timeout_ms: 1.5 }, ctx)).message, /`timeout_ms`/);
  // spawn() would throw on these (ERR_INVALID_ARG_VALUE, E2BIG): refused as the model's input instead
  assert.match(failure(await run({ command: 'echo a\u0000b' }, ctx)).message, /`command`: contains a NUL/);
  const long = failure(await run({ command: `echo ${'a'.repeat(128 * 1024)}` }, ctx));
  assert.equal(long.error_class, 'invalid_input');
  assert.match(long.message, /`command`: is 131077 bytes/);
});

test('a command that exits while a process it started in its own session holds the output is its exit, not a timeout', async (t) => {
  const { ctx, dir } = await workspace(t);
  // setsid: the sleep leaves the process group (so the exit's group kill misses it) and keeps stdout open
  const res = await run(
    {
      command: "setsid sh -c 'echo $$ > escaped.pid; exec sleep 30' & sleep 0.2; echo finished",
      timeout_ms: 10_000,
    },
    ctx,
  );
  const escaped = Number(await readFile(path.join(dir, 'escaped.pid'), 'utf8'));
  t.after(() => process.kill(escaped, 'SIGKILL'));
  assert.equal(res.ok, true, JSON.stringify(res));
  assert.equal(res.ok && res.output, 'exit code: 0\nfinished\n');
});
