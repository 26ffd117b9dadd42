/**
 * @module The only reader of process.env: every SVC_* and provider variable, typed. A variable whose flag
 * is given (`--port` over SVC_GATEWAY_PORT, `--db-path` over SVC_DB_PATH…) is not read, so not checked
 * either; each other value is checked where its setting is parsed, once (SVC_DEBUG here: every command).
 */
import { SvcError } from '../lib/errors.ts';

export interface SvcEnv {
  readonly home: string | undefined;
  readonly xdgConfigHome: string | undefined;
  /** SVC_DEBUG: stack traces with errors, debug log lines (parseDebug). */
  readonly debug: boolean;
  readonly dbPath: string | undefined;
  /** SVC_DATABASE_URL: a postgres:// URL selects PostgreSQL as the store for every command. */
  readonly databaseUrl: string | undefined;
  /** SVC_DATABASE_TIMEOUT_MS: how long a PostgreSQL connection attempt or statement may go unanswered. */
  readonly databaseTimeoutMs: string | undefined;
  /** SVC_SQLITE_BUSY_TIMEOUT_MS: how long a SQLite statement waits for another connection's lock. */
  readonly sqliteBusyTimeoutMs: string | undefined;
  readonly gatewayDbPath: string | undefined;
  readonly gatewayKeystore: string | undefined;
  readonly gatewayHost: string | undefined;
  readonly gatewayPort: string | undefined;
  readonly gatewayGlobalDefault: string | undefined;
  readonly gatewayMaxBodyBytes: string | undefined;
  readonly gatewayHeadersTimeoutMs: string | undefined;
  readonly gatewayRequestTimeoutMs: string | undefined;
  readonly gatewayMaxUpstreamBodyBytes: string | undefined;
  readonly gatewayMaxSseLineBytes: string | undefined;
  readonly gatewayUpstreamTimeoutMs: string | undefined;
  readonly gatewayStreamIdleTimeoutMs: string | undefined;
  readonly gatewayMaxRetries: string | undefined;
  readonly allowedHosts: string | undefined;
  readonly routingPolicy: string | undefined;
  readonly models: string | undefined;
  readonly patternRefreshMs: string | undefined;
  readonly anthropicApiKey: string | undefined;
  readonly openaiApiKey: string | undefined;
  readonly openrouterApiKey: string | undefined;
  readonly anthropicBaseUrl: string | undefined;
  readonly openaiBaseUrl: string | undefined;
  readonly openrouterBaseUrl: string | undefined;
  readonly servePort: string | undefined;
  readonly serveHost: string | undefined;
  readonly agentMaxSteps: string | undefined;
  readonly agentConfirmationTimeoutMs: string | undefined;
  readonly agentTurnTimeoutMs: string | undefined;
  readonly wsPingIntervalMs: string | undefined;
  readonly wsQueueLimit: string | undefined;
  /** SVC_TEST_FAULT (tests only): `throw` or `reject` outside any request on SIGUSR2 (lib/fatal-error.ts). */
  readonly testFault: string | undefined;
}

/**
 * Reads the environment once; pass the result down instead of touching process.env. Throws startup_refused
 * for an SVC_DEBUG that is no switch value (parseDebug).
 */
export function readEnv(env: NodeJS.ProcessEnv = process.env): SvcEnv {
  const get = (name: string) => {
    const v = env[name];
    return v === undefined || v === '' ? undefined : v;
  };
  return Object.freeze({
    home: get('HOME'),
    xdgConfigHome: get('XDG_CONFIG_HOME'),
    debug: parseDebug(get('SVC_DEBUG')),
    dbPath: get('SVC_DB_PATH'),
    databaseUrl: get('SVC_DATABASE_URL'),
    databaseTimeoutMs: get('SVC_DATABASE_TIMEOUT_MS'),
    sqliteBusyTimeoutMs: get('SVC_SQLITE_BUSY_TIMEOUT_MS'),
    gatewayDbPath: get('SVC_GATEWAY_DB_PATH'),
    gatewayKeystore: get('SVC_GATEWAY_KEYSTORE'),
    gatewayHost: get('SVC_GATEWAY_HOST'),
    gatewayPort: get('SVC_GATEWAY_PORT'),
    gatewayGlobalDefault: get('SVC_GATEWAY_GLOBAL_DEFAULT'),
    gatewayMaxBodyBytes: get('SVC_GATEWAY_MAX_BODY_BYTES'),
    gatewayHeadersTimeoutMs: get('SVC_GATEWAY_HEADERS_TIMEOUT_MS'),
    gatewayRequestTimeoutMs: get('SVC_GATEWAY_REQUEST_TIMEOUT_MS'),
    gatewayMaxUpstreamBodyBytes: get('SVC_GATEWAY_MAX_UPSTREAM_BODY_BYTES'),
    gatewayMaxSseLineBytes: get('SVC_GATEWAY_MAX_SSE_LINE_BYTES'),
    gatewayUpstreamTimeoutMs: get('SVC_GATEWAY_UPSTREAM_TIMEOUT_MS'),
    gatewayStreamIdleTimeoutMs: get('SVC_GATEWAY_STREAM_IDLE_TIMEOUT_MS'),
    gatewayMaxRetries: get('SVC_GATEWAY_MAX_RETRIES'),
    allowedHosts: get('SVC_ALLOWED_HOSTS'),
    routingPolicy: get('SVC_ROUTING_POLICY'),
    models: get('SVC_MODELS'),
    patternRefreshMs: get('SVC_PATTERN_REFRESH_MS'),
    anthropicApiKey: get('ANTHROPIC_API_KEY'),
    openaiApiKey: get('OPENAI_API_KEY'),
    openrouterApiKey: get('OPENROUTER_API_KEY'),
    anthropicBaseUrl: get('ANTHROPIC_BASE_URL'),
    openaiBaseUrl: get('OPENAI_BASE_URL'),
    openrouterBaseUrl: get('OPENROUTER_BASE_URL'),
    servePort: get('SVC_SERVE_PORT'),
    serveHost: get('SVC_SERVE_HOST'),
    agentMaxSteps: get('SVC_AGENT_MAX_STEPS'),
    agentConfirmationTimeoutMs: get('SVC_AGENT_CONFIRMATION_TIMEOUT_MS'),
    agentTurnTimeoutMs: get('SVC_AGENT_TURN_TIMEOUT_MS'),
    wsPingIntervalMs: get('SVC_WS_PING_INTERVAL_MS'),
    wsQueueLimit: get('SVC_WS_QUEUE_LIMIT'),
    testFault: get('SVC_TEST_FAULT'),
  });
}

/** SVC_DEBUG's values, case ignored; unset or empty is off. */
const DEBUG_VALUES: ReadonlyMap<string, boolean> = new Map([
  ['1', true],
  ['true', true],
  ['yes', true],
  ['on', true],
  ['0', false],
  ['false', false],
  ['no', false],
  ['off', false],
]);

/**
 * SVC_DEBUG as a switch. Any other value (`SVC_DEBUG=verbose`, `=2`) refuses the command: read as off, a
 * user asking for stack traces got none and was not told why.
 */
export function parseDebug(text: string | undefined): boolean {
  if (text === undefined) return false;
  const on = DEBUG_VALUES.get(text.trim().toLowerCase());
  if (on !== undefined) return on;
  throw new SvcError('startup_refused', {
    message: `SVC_DEBUG must be 1, true, yes or on (or 0, false, no, off to leave it off), not "${text}"; fix or unset it and run svc again.`,
  });
}

/** SVC_DEBUG for the error report: off when the value is refused (that refusal is the error being reported). */
export function debugRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  try {
    return parseDebug(env.SVC_DEBUG === '' ? undefined : env.SVC_DEBUG);
  } catch {
    return false;
  }
}

/** The environment a child process of the agent's run_command starts from (the tool strips secrets). */
export function processEnvForChildren(): NodeJS.ProcessEnv {
  return { ...process.env };
}
