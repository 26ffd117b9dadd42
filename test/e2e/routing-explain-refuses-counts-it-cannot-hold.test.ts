/**
 * `svc routing explain --input-tokens` / `--messages` past 2^53 were taken and printed rounded
 * (`input_tokens≈100000000000000000000`, a bucket of 147573952589676410000): a number the request could never
 * carry. They are now a usage error (exit 2, one sentence naming the flag), like the other malformed counts.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { isolatedEnv, makeTempDir, runSvc } from '../helpers/svc.ts';

test('explain refuses a count above 2^53 with exit 2 naming the flag; the largest exact one is shown as given', async (t) => {
  const tmp = makeTempDir('svc-explain-counts-');
  t.after(tmp.cleanup);
  const env = isolatedEnv(tmp.dir, { ANTHROPIC_API_KEY: 'sk-ant-test' });
  const explain = (...flags: string[]) =>
    runSvc(['routing', 'explain', '--model', 'auto', '--text', 'hi', ...flags], { env });

  for (const [flag, value, range] of [
    ['--input-tokens', '99999999999999999999', ''],
    ['--messages', '99999999999999999999', 'from 1 '],
    // a request without messages is one the gateway refuses (400 naming messages): nothing to explain
    ['--messages', '0', 'from 1 '],
  ]) {
    const run = await explain(flag, value);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stdout, '');
    assert.equal(
      run.stderr.trim(),
      `svc: ${flag} must be a whole number ${range}up to 9007199254740991, not "${value}".`,
    );
  }
  const largest = await explain('--input-tokens', '9007199254740991');
  assert.equal(largest.code, 0, largest.stderr);
  assert.match(largest.stdout, /^request .* input_tokens≈9007199254740991 messages=1$/m);

  // the context check counts the output a request asks for, as the gateway does: 150,000 tokens of input
  // with Claude Code's max_tokens of 64,000 do not fit Sonnet 4.5's 200,000 (the gateway refuses that
  // request context_too_small), which explain without --max-tokens showed accepted
  const withOutput = await runSvc(
    [
      'routing',
      'explain',
      '--model',
      'balanced',
      '--text',
      'hi',
      '--input-tokens',
      '150000',
      '--max-tokens',
      '64000',
    ],
    { env },
  );
  assert.equal(withOutput.code, 0, withOutput.stderr);
  assert.match(withOutput.stdout, /^request .* input_tokens≈150000 messages=1 max_tokens=64000$/m);
  assert.match(
    withOutput.stdout,
    /^ {2}1 per_message_override {2}rejected {2}anthropic:claude-sonnet-4-5 \(context_too_small\)$/m,
  );
  assert.match(
    withOutput.stdout,
    /^winner {7}none: routing_failed \(prompt is too long: 214000 tokens > 200000 maximum/m,
  );
  const zero = await explain('--max-tokens', '0');
  assert.equal(zero.code, 2);
  assert.equal(
    zero.stderr.trim(),
    'svc: --max-tokens must be a whole number from 1 up to 9007199254740991, not "0".',
  );
});

test('explain refuses a blank --model as the gateway does, and routes cost_today_above with --cost-today', async (t) => {
  // a blank --model explained a request the gateway answers 400 (model must not be empty), and a
  // cost_today_above rule never held in explain (today's spend was taken as 0 and not shown)
  const tmp = makeTempDir('svc-explain-cost-');
  t.after(tmp.cleanup);
  const env = isolatedEnv(tmp.dir, { ANTHROPIC_API_KEY: 'sk-ant-test' });
  const routing = join(tmp.dir, 'routing.yaml');
  writeFileSync(routing, 'rules:\n  - { name: over-budget, when: { cost_today_above: 25 }, use: fast }\n');
  const explain = (...flags: string[]) =>
    runSvc(['routing', 'explain', '--text', 'hi', '--routing', routing, ...flags], { env });

  for (const [flags, sentence] of [
    [
      ['--model', ' '],
      'svc: --model must not be empty: give the model a request names, such as auto or fast.',
    ],
    [
      ['--model', 'auto', '--cost-today', '-1'],
      'svc: --cost-today must be a non-negative amount of USD such as 25 or 2.50, not "-1".',
    ],
    // an empty tool name (an unset variable in `--tools "$A,$B"`) names no tool: it read as no tools at all
    [
      ['--model', 'auto', '--tools', ',,'],
      'svc: --tools ",," holds an empty tool name: give comma-separated names such as read_file,bash, or leave --tools out for a request without tools.',
    ],
    [
      ['--model', 'auto', '--tools='],
      'svc: --tools "" holds an empty tool name: give comma-separated names such as read_file,bash, or leave --tools out for a request without tools.',
    ],
  ] as const) {
    const run = await explain(...flags);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stdout, '');
    assert.equal(run.stderr.trim(), sentence);
  }
  const under = await explain('--model', 'auto', '--cost-today', '25');
  assert.equal(under.code, 0, under.stderr);
  assert.match(under.stdout, /^request .* cost_today=\$25 /m);
  assert.match(under.stdout, /^ {2}3 rule {18}no_match$/m);
  const over = await explain('--model', 'auto', '--cost-today', '25.01');
  assert.equal(over.code, 0, over.stderr);
  assert.match(over.stdout, /^ {2}3 rule {18}accepted {2}anthropic:claude-haiku-4-5 \(rule over-budget\)$/m);
  // the provider keys explain assumes are those of its own shell, which a server's may not share: it says
  // which (a shell with none showed every model provider_unavailable with no word why)
  assert.match(over.stdout, /^providers {4}anthropic \(the \*_API_KEY variables set here\)$/m);
  const none = await runSvc(['routing', 'explain', '--model', 'auto', '--text', 'hi'], {
    env: isolatedEnv(tmp.dir),
  });
  assert.equal(none.code, 0, none.stderr);
  assert.match(
    none.stdout,
    /^providers {4}none: ANTHROPIC_API_KEY, OPENAI_API_KEY and OPENROUTER_API_KEY are unset here, so every model is provider_unavailable \(a server refuses to start without one\)$/m,
  );
});

// SVC_SQLITE_BUSY_TIMEOUT_MS bounds every wait for another connection's lock: explain read the pattern table
// with the fixed 10 s instead, so a store held by a writer kept it waiting that long whatever the setting
test('explain, backup and restore wait for a locked store only as long as SVC_SQLITE_BUSY_TIMEOUT_MS says', async (t) => {
  const tmp = makeTempDir('svc-explain-busy-');
  t.after(tmp.cleanup);
  const db = join(tmp.dir, 'svc.db');
  const env = isolatedEnv(tmp.dir, { SVC_SQLITE_BUSY_TIMEOUT_MS: '200' });
  const issued = await runSvc(
    ['gateway', 'issue-key', '--name', 'a', '--workspace', tmp.dir, '--db-path', db],
    {
      env,
    },
  );
  assert.equal(issued.code, 0, issued.stderr);
  // a connection in exclusive locking mode that has written keeps every other connection out, readers too
  const holder = new DatabaseSync(db);
  t.after(() => holder.close());
  holder.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; CREATE TABLE held (x)');
  // the default wait (10 s) would outlast this bound; svc backup reads the store the same way
  const [run, backup, restore] = await Promise.all([
    runSvc(['routing', 'explain', '--model', 'auto', '--text', 'hi', '--db-path', db], {
      env,
      timeoutMs: 5_000,
    }),
    runSvc(['backup', join(tmp.dir, 'b.db'), '--db-path', db], { env, timeoutMs: 5_000 }),
    // restore reads its backup file the same way (a store held open is the backup here)
    runSvc(['restore', db, '--db-path', join(tmp.dir, 'restored.db')], { env, timeoutMs: 5_000 }),
  ]);
  assert.equal(restore.code, 1, `exit ${restore.code}: ${restore.stderr}`);
  assert.match(
    restore.stderr,
    /^svc: The backup .*svc\.db is locked by another process \(database is locked\); run restore again once that process has let it go\.\n$/,
  );
  assert.equal(existsSync(join(tmp.dir, 'restored.db')), false);
  for (const r of [run, backup]) {
    assert.equal(r.code, 1, `exit ${r.code}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(
      r.stderr,
      /^svc: Cannot use the trace store .*database is locked; run the command again when it is idle\./,
    );
  }
  assert.equal(existsSync(join(tmp.dir, 'b.db')), false);
});
