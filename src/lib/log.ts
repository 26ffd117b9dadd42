/**
 * @module Structured JSON-line logging. Callers pass fields, never tokens or prompts.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LoggerOptions {
  write?: (line: string) => void;
  level?: LogLevel;
  base?: Record<string, unknown>;
}

/** One JSON object per line: `{"time","level","msg",...fields}`. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const min = ORDER[options.level ?? 'info'];
  const base = options.base ?? {};
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < min) return;
    write(
      `${JSON.stringify({ time: new Date().toISOString(), level, msg, ...base, ...fields }, replacer)}\n`,
    );
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ ...options, base: { ...base, ...fields } }),
  };
}

/** A logger that drops everything (tests, library use). */
export const silentLogger: Logger = createLogger({ write: () => {} });

// --- internal ---

function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/**
 * Whether a warning that can repeat every few hundred milliseconds (a failing background job) goes out
 * now: the first time, when its text changes, and then once per `intervalMs`, with how many it held back.
 */
export function createRepeatFilter(
  intervalMs: number,
  now: () => number = Date.now,
): (text: string) => { emit: boolean; held: number } {
  let last: { text: string; atMs: number } | undefined;
  let held = 0;
  return (text) => {
    const t = now();
    if (last && last.text === text && t - last.atMs < intervalMs) {
      held++;
      return { emit: false, held };
    }
    const out = { emit: true, held: last?.text === text ? held : 0 };
    last = { text, atMs: t };
    held = 0;
    return out;
  };
}
