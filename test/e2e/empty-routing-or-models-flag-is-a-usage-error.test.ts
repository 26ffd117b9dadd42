/**
 * `--routing ''` / `--models ''` (an unset shell variable: `--routing "$POLICY"`) name no file. Like
 * `--db-path ''`, they are a usage error (exit 2, one sentence, README §Commands) before anything starts
 * (the `svc analytics` reports' `--models` too, which read the file '' like the servers did):
 * `svc gateway` used to start on the built-in policy with an error naming the file "" (every rule the
 * operator meant silently gone), `--models ''` refused with "Cannot read the model registry  (… open '')", and
 * `svc routing explain --routing ''` explained the built-in policy. An empty `--host ''` started both servers
 * on 127.0.0.1 with nothing said.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gatewayFiles, issueKey, readEvents } from '../helpers/gateway-keys.ts';
import { makeTempDir, runSvc } from '../helpers/svc.ts';

const tmp = makeTempDir();
test.after(() => tmp.cleanup());

test('an empty --routing, --models or --host is exit 2 with one sentence, and nothing starts', async () => {
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env);
  const cases: Array<[string[], RegExp]> = [
    [['gateway', '--port', '0', '--routing', ''], /^svc: --routing needs a file path; leave it out to use/],
    [['gateway', '--port', '0', '--models', ' '], /^svc: --models needs a file path; leave it out to use/],
    [['serve', '--port', '0', '--routing', ''], /^svc: --routing needs a file path; leave it out to use/],
    [['serve', '--port', '0', '--models', ''], /^svc: --models needs a file path; leave it out to use/],
    [
      ['routing', 'explain', '--model', 'auto', '--text', 'hi', '--routing', ''],
      /^svc: --routing needs a file path; leave it out to use/,
    ],
    [
      ['routing', 'explain', '--model', 'auto', '--text', 'hi', '--models', ''],
      /^svc: --models needs a file path; leave it out to use/,
    ],
    // the reports read the price table too (savings re-prices with it)
    [['analytics', 'savings', '--models', ''], /^svc: --models needs a file path; leave it out to use/],
    // an empty --host bound 127.0.0.1 with nothing said, the address the operator meant silently gone
    [
      ['gateway', '--port', '0', '--host', ''],
      /^svc: --host needs a loopback address such as 127\.0\.0\.1; leave it out/,
    ],
    [['serve', '--port', '0', '--host=', '--db-path', files.db], /^svc: --host needs a loopback address/],
    [
      ['routing', 'explain', '--model', 'auto', '--text', 'hi', '--workspace', ''],
      /^svc: --workspace must not be empty: give the key's or session's workspace folder, or leave it out\.$/m,
    ],
  ];
  for (const [args, message] of cases) {
    // a server that did start would only stop at the timeout: the refusal must come first
    const r = await runSvc(args, { env: files.env, timeoutMs: 10_000 });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, message);
  }
  // issue-key's audit event only: no server registered its subscribers
  assert.deepEqual(
    readEvents(files.db).map((e) => e.type),
    ['gateway.key_issued'],
  );
});
