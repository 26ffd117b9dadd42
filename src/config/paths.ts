/**
 * @module Where files live: flag > environment > XDG default (DECISIONS §2).
 */
import { homedir, userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { SvcError } from '../lib/errors.ts';
import type { SvcEnv } from './env.ts';
import { positiveInt } from './env-numbers.ts';

/**
 * `$XDG_CONFIG_HOME/svc`, default `~/.config/svc`. A relative XDG_CONFIG_HOME is ignored, as the XDG Base
 * Directory spec says, so the store never lands in whatever folder a command was started from.
 */
export function configDir(env: SvcEnv): string {
  const xdg =
    env.xdgConfigHome !== undefined && isAbsolute(env.xdgConfigHome) ? env.xdgConfigHome : undefined;
  return join(xdg ?? join(homeDir(env), '.config'), 'svc');
}

/** The default trace store as README and every `--db-path` help give it (resolveDbPath's last choice). */
export const DEFAULT_DB_PATH_HELP = '$XDG_CONFIG_HOME/svc/svc.db, i.e. ~/.config/svc/svc.db';

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

/**
 * Keystore path: `--keystore`, else SVC_GATEWAY_KEYSTORE, else `~/.config/svc/keys.json` (DECISIONS §2 names
 * the home folder here, not XDG_CONFIG_HOME as for the trace store).
 */
export function resolveKeystorePath(env: SvcEnv, flag: string | undefined): string {
  if (flag !== undefined && flag.trim() === '')
    throw new SvcError('usage_error', {
      message:
        '--keystore needs a file path; leave it out to use SVC_GATEWAY_KEYSTORE or ~/.config/svc/keys.json.',
    });
  // the keystore is read and rewritten in place: "-" is no stream here, and never a file named "-" (as backup)
  if (flag === '-')
    throw new SvcError('usage_error', {
      message:
        '--keystore is a file, not standard input or output ("-"); name the file (./- for a file called -).',
    });
  // the variable alike, refused as every bad SVC_* setting is (exit 1), never a file named "-"
  if (flag === undefined && env.gatewayKeystore === '-')
    throw new SvcError('config_invalid', {
      message:
        'SVC_GATEWAY_KEYSTORE is a file, not standard input or output ("-"); set it to the file\'s path (./- for a file called -), or unset it to use ~/.config/svc/keys.json.',
    });
  return flag ?? env.gatewayKeystore ?? join(homeDir(env), '.config', 'svc', 'keys.json');
}

/** Where the store lives: a SQLite file (the embedded default) or a PostgreSQL database. */
export type StoreTarget =
  /** busyTimeoutMs: SVC_SQLITE_BUSY_TIMEOUT_MS, how long a statement waits for another connection's lock. */
  | { engine: 'sqlite'; path: string; busyTimeoutMs?: number }
  /** timeoutMs: SVC_DATABASE_TIMEOUT_MS, how long a connection attempt or a statement may go unanswered. */
  | { engine: 'postgres'; url: string; timeoutMs?: number };

export interface StoreFlags {
  dbPath?: string;
  databaseUrl?: string;
}

/**
 * `--database-url` or `--db-path` (not both), else SVC_DATABASE_URL, else the SQLite path of
 * resolveDbPath. SVC_DATABASE_URL beats the SQLite path variables, since the container image sets
 * SVC_GATEWAY_DB_PATH by default.
 */
export function resolveStoreTarget(
  env: SvcEnv,
  flags: StoreFlags = {},
  scope: 'gateway' | 'any' = 'any',
): StoreTarget {
  const target = resolveTarget(env, flags, scope);
  if (target.engine === 'sqlite') {
    const busyTimeoutMs = positiveInt(env.sqliteBusyTimeoutMs, 'SVC_SQLITE_BUSY_TIMEOUT_MS');
    return busyTimeoutMs === undefined ? target : { ...target, busyTimeoutMs };
  }
  const timeoutMs = positiveInt(env.databaseTimeoutMs, 'SVC_DATABASE_TIMEOUT_MS');
  return timeoutMs === undefined ? target : { ...target, timeoutMs };
}

// --- internal ---

function resolveTarget(env: SvcEnv, flags: StoreFlags, scope: 'gateway' | 'any'): StoreTarget {
  if (flags.databaseUrl !== undefined && flags.dbPath !== undefined) {
    throw new SvcError('usage_error', {
      message: 'Pass either --database-url or --db-path, not both: they name two different stores.',
    });
  }
  if (flags.databaseUrl !== undefined) return postgresTarget(flags.databaseUrl, '--database-url');
  if (flags.dbPath === '')
    throw new SvcError('usage_error', {
      message: '--db-path needs a file path; leave it out to use the default store.',
    });
  if (flags.dbPath !== undefined) return pathTarget(flags.dbPath, '--db-path');
  if (env.databaseUrl !== undefined) return postgresTarget(env.databaseUrl, 'SVC_DATABASE_URL');
  const path = resolveDbPath(env, undefined, scope);
  const source = scope === 'gateway' && env.gatewayDbPath ? 'SVC_GATEWAY_DB_PATH' : 'SVC_DB_PATH';
  return pathTarget(path, source);
}

/**
 * HOME when it is an absolute path, else the account's home folder from the user database: os.homedir()
 * returns an empty or relative HOME as it is, which made the default paths relative to the current folder.
 */
function homeDir(env: SvcEnv): string {
  if (env.home !== undefined && isAbsolute(env.home)) return env.home;
  const fromOs = homedir();
  if (isAbsolute(fromOs)) return fromOs;
  return userInfo().homedir;
}

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/**
 * A store path; a PostgreSQL URL given there (`--db-path postgres://…`) selects that database, as
 * `--database-url` would, rather than a SQLite file in folders named after the URL and its password.
 */
function pathTarget(path: string, source: string): StoreTarget {
  return POSTGRES_URL.test(path) ? postgresTarget(path, source) : { engine: 'sqlite', path };
}

/**
 * The `sslmode` values svc connects with as libpq does (README, PostgreSQL store); `no-verify` is
 * node-postgres' name for `require`. Any other value would be taken as verify-full by node-postgres,
 * where psql refuses it (a typo) or connects in plain text (`allow`).
 */
const SSL_MODES = new Set(['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify']);

/**
 * A flag's bad URL is a usage error (exit 2); a variable's refuses the start (exit 1) like every other
 * bad SVC_* setting. The URL itself is never echoed: it may hold the database password.
 */
function postgresTarget(url: string, source: string): StoreTarget {
  const flag = source.startsWith('--');
  const code = flag ? 'usage_error' : 'config_invalid';
  const unset = flag ? 'leave it out' : 'unset it';
  if (!POSTGRES_URL.test(url) || !URL.canParse(url)) {
    throw new SvcError(code, {
      message: `${source} must be a valid postgres:// or postgresql:// URL (postgres://user:password@host:5432/database); fix it, or ${unset} to use the SQLite file.`,
    });
  }
  // a '@' in the path or any fragment: an unencoded @ / ? # of the password ended the host early (p@ss#1
  // is host 'ss' and fragment '#1…'), so the messages that name the database would show the password
  const parsed = new URL(url);
  if (parsed.hash !== '' || url.includes('#') || parsed.pathname.includes('@')) {
    throw new SvcError(code, {
      message: `${source} must be a valid postgres:// or postgresql:// URL, and this one's user or password seems to hold a character to percent-encode (@ is %40, # %23, / %2F, ? %3F, % %25); fix it (or leave the password out and set PGPASSWORD), or ${unset} to use the SQLite file.`,
    });
  }
  const mode = parsed.searchParams.get('sslmode');
  if (mode !== null && !SSL_MODES.has(mode)) {
    const shown = /^[\w-]{1,40}$/.test(mode) ? `sslmode=${mode}` : 'its sslmode';
    throw new SvcError(code, {
      message: `${source} asks for ${shown}, which svc does not know; use sslmode=disable, require, verify-ca or verify-full.`,
    });
  }
  return { engine: 'postgres', url };
}
