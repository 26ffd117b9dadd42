import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gatewayFiles } from '../helpers/gateway-keys.ts';
import { type LoadedCode, runSvcLoading } from '../helpers/loaded-code.ts';
import { makeTempDir } from '../helpers/svc.ts';

// A one-shot command (a key command, a report, forget, --help) loads only the code it runs: not the HTTP
// servers' (Hono, undici, prom-client, the gateway's pipeline), nor PostgreSQL's driver for a SQLite store,
// nor Node's own HTTP stack. Each such start cost ~0.1 s of CPU more (README §Performance, one-shot commands).
const SERVER_CODE = [
  'hono',
  '@hono/node-server',
  '@hono/node-ws',
  'ws',
  'undici',
  'prom-client',
  'pg',
  'src/gateway/server.ts',
  'src/gateway/app.ts',
  'src/http/listen.ts',
  'src/agent/server.ts',
];
const NODE_HTTP = ['NativeModule http', 'NativeModule internal/deps/undici/undici'];

const tmp = makeTempDir();
test.after(() => tmp.cleanup());
const home = join(tmp.dir, 'home');
mkdirSync(home);
const f = gatewayFiles(home);
let runs = 0;
const run = (args: string[]) =>
  runSvcLoading(args, { env: f.env, out: join(tmp.dir, `loaded-${runs++}.json`) });

function assertOnlyOwnCode(r: LoadedCode, ownCode: string[]): void {
  assert.equal(r.code, 0, r.stderr);
  for (const s of ownCode)
    assert.ok(r.sources.has(s), `${s} is the command's own code: the probe must see it`);
  assert.deepEqual(
    SERVER_CODE.filter((s) => r.sources.has(s)),
    [],
  );
  assert.deepEqual(
    NODE_HTTP.filter((m) => r.builtins.has(m)),
    [],
  );
}

test('key commands, reports, forget and --help load no server code', async () => {
  // one after another: issue-key creates the store the others read
  const issued = await run(['gateway', 'issue-key', '--name', 'ci', '--workspace', home]);
  assertOnlyOwnCode(issued, ['src/gateway/key-admin.ts', 'src/store/sqlite.ts']);
  const [listed, cost, forget, help] = await Promise.all([
    run(['gateway', 'list-keys']),
    run(['analytics', 'cost', '--db-path', f.db]),
    run(['user', 'forget', 'usr_nobody', '--confirm', '--db-path', f.db]),
    run(['--help']),
  ]);
  assertOnlyOwnCode(listed, ['src/gateway/key-admin.ts']);
  assertOnlyOwnCode(cost, ['src/analytics/queries/cost.ts']);
  assertOnlyOwnCode(forget, ['src/cli/commands/user/forget.ts']);
  assertOnlyOwnCode(help, ['src/cli/root.ts']);
});
