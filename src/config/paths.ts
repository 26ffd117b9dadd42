/**
 * @module Where files live: flag > environment > XDG default (DECISIONS §2).
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { SvcEnv } from './env.ts';

/** `$XDG_CONFIG_HOME/svc`, default `~/.config/svc`. */
export function configDir(env: SvcEnv): string {
  const base = env.xdgConfigHome ?? join(env.home ?? homedir(), '.config');
  return join(base, 'svc');
}

/** Trace store path; gateway commands also honour SVC_GATEWAY_DB_PATH, which wins over SVC_DB_PATH. */
export function resolveDbPath(
  env: SvcEnv,
  flag: string | undefined,
  scope: 'gateway' | 'any' = 'any',
): string {
  if (flag) return flag;
  if (scope === 'gateway' && env.gatewayDbPath) return env.gatewayDbPath;
  return env.dbPath ?? join(configDir(env), 'svc.db');
}

/** Keystore path: `--keystore`, else SVC_GATEWAY_KEYSTORE, else `~/.config/svc/keys.json`. */
export function resolveKeystorePath(env: SvcEnv, flag: string | undefined): string {
  return flag ?? env.gatewayKeystore ?? join(configDir(env), 'keys.json');
}
