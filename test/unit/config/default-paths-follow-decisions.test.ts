/**
 * Default file locations (DECISIONS §2 Paths): the trace store under `$XDG_CONFIG_HOME/svc/svc.db`
 * (default `~/.config/svc/svc.db`), the keystore at `~/.config/svc/keys.json` whatever XDG_CONFIG_HOME says;
 * a flag beats the variable, which beats the default.
 */
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { isAbsolute } from 'node:path';
import { test } from 'node:test';
import type { SvcEnv } from '#src/config/env.ts';
import { resolveDbPath, resolveKeystorePath } from '#src/config/paths.ts';

const env = (over: Partial<SvcEnv>) => ({ home: '/home/u', xdgConfigHome: undefined, ...over }) as SvcEnv;

test('the keystore defaults to ~/.config/svc/keys.json, also when XDG_CONFIG_HOME points elsewhere', () => {
  assert.equal(resolveKeystorePath(env({}), undefined), '/home/u/.config/svc/keys.json');
  assert.equal(
    resolveKeystorePath(env({ xdgConfigHome: '/xdg' }), undefined),
    '/home/u/.config/svc/keys.json',
  );
  assert.equal(
    resolveKeystorePath(env({ gatewayKeystore: '/etc/svc/keys.json' }), undefined),
    '/etc/svc/keys.json',
  );
  assert.equal(resolveKeystorePath(env({ gatewayKeystore: '/etc/svc/keys.json' }), '/k.json'), '/k.json');
});

test('the trace store follows XDG_CONFIG_HOME, else ~/.config', () => {
  assert.equal(resolveDbPath(env({}), undefined), '/home/u/.config/svc/svc.db');
  assert.equal(resolveDbPath(env({ xdgConfigHome: '/xdg' }), undefined), '/xdg/svc/svc.db');
  assert.equal(
    resolveDbPath(env({ dbPath: '/d.db', gatewayDbPath: '/g.db' }), undefined, 'gateway'),
    '/g.db',
  );
  assert.equal(resolveDbPath(env({ dbPath: '/d.db' }), '/f.db'), '/f.db');
});

test('a relative XDG_CONFIG_HOME or HOME is ignored, so no default path is relative to the current folder', () => {
  assert.equal(resolveDbPath(env({ xdgConfigHome: 'relcfg' }), undefined), '/home/u/.config/svc/svc.db');
  const account = userInfo().homedir;
  for (const home of ['relative-home', '.']) {
    assert.equal(resolveDbPath(env({ home }), undefined), `${account}/.config/svc/svc.db`);
    assert.equal(resolveKeystorePath(env({ home }), undefined), `${account}/.config/svc/keys.json`);
  }
  // readEnv turns an empty HOME into undefined; os.homedir() then still reads HOME='' as it is
  const saved = process.env.HOME;
  process.env.HOME = '';
  try {
    assert.ok(isAbsolute(resolveDbPath(env({ home: undefined }), undefined)));
    assert.ok(isAbsolute(resolveKeystorePath(env({ home: undefined }), undefined)));
  } finally {
    process.env.HOME = saved;
  }
});
