/**
 * Default file locations (DECISIONS §2 Paths): the trace store under `$XDG_CONFIG_HOME/svc/svc.db`
 * (default `~/.config/svc/svc.db`), the keystore at `~/.config/svc/keys.json` whatever XDG_CONFIG_HOME says;
 * a flag beats the variable, which beats the default.
 */
import assert from 'node:assert/strict';
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
