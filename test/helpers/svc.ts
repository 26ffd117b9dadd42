/**
 * Runs the real built `svc` executable: one-shot commands (`runSvc`) and long-running servers
 * (`startSvc`). Builds dist/ once if it is missing or older than src/ (npm test builds first anyway).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SVC_BIN = join(ROOT, 'bin/svc');
const NODE = process.execPath; // Node 24 from the project's node package

export interface SvcResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  input?: string;
  cwd?: string;
  timeoutMs?: number;
  /** Run as uid/gid NOBODY when the tests run as root (root reads and writes past any file mode). */
  unprivileged?: boolean;
}

/** The unprivileged uid and gid a test drops to when it runs as root. */
export const NOBODY = 65_534;
/** The tests run as root: file modes alone restrict nothing, so permission tests drop to NOBODY. */
export const RUNS_AS_ROOT = process.getuid?.() === 0;

/** A temp directory removed in `after`; `home` is used as HOME/XDG so nothing touches the real user. */
export function makeTempDir(prefix = 'svc-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // t.after hooks run in the order they were added, so a server may still be writing here (a WAL checkpoint
  // re-creating a file makes rm fail with ENOTEMPTY): retry, and never fail a test over a leftover temp dir
  const cleanup = () => {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    } catch {}
  };
  return { dir, cleanup };
}

/** Environment for a child: a private HOME/XDG and no inherited SVC_* or provider variables. */
export function isolatedEnv(home: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(SVC_|ANTHROPIC_|OPENAI_|OPENROUTER_)/.test(k)) continue;
    env[k] = v;
  }
  env.HOME = home;
  env.XDG_CONFIG_HOME = join(home, '.config');
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

let built = false;
/**
 * Builds dist/ when it is missing or stale. tsup empties dist/ first, so a build under way must not overlap
 * another test file's build or its running svc: the build holds the same lock file `npm run build` is run
 * under by hand here (`flock /tmp/svc-build.lock npm run build`), and checks staleness again once it has it.
 */
export function ensureBuilt(): void {
  if (built) return;
  const bundle = join(ROOT, 'dist/main.js');
  const stale = () => !existsSync(bundle) || newestMtime(join(ROOT, 'src')) > statSync(bundle).mtimeMs;
  if (stale()) {
    const tsup = [NODE, join(ROOT, 'node_modules/tsup/dist/cli-default.js')];
    const script = `if ${STALE_CHECK}; then exec "$@"; fi`;
    try {
      execFileSync('flock', [BUILD_LOCK, 'sh', '-c', script, 'build', ...tsup], {
        cwd: ROOT,
        stdio: 'ignore',
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      execFileSync(tsup[0]!, tsup.slice(1), { cwd: ROOT, stdio: 'ignore' }); // no flock(1) on this machine
    }
  }
  built = true;
}

const BUILD_LOCK = join(tmpdir(), 'svc-build.lock');
/** Shell test, run under the lock: dist/main.js is missing or a file under src/ is newer than it. */
const STALE_CHECK = '[ ! -f dist/main.js ] || [ -n "$(find src -newer dist/main.js -print -quit)" ]';

/** Runs `svc <args>` to completion. */
export function runSvc(args: string[], options: RunOptions = {}): Promise<SvcResult> {
  ensureBuilt();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(NODE, [SVC_BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: options.env as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(options.unprivileged && RUNS_AS_ROOT ? { uid: NOBODY, gid: NOBODY } : {}),
    });
    collectOutput(child, options.timeoutMs ?? 60_000).then(resolvePromise, reject);
    // a command that exits before it reads its input (a usage error) closes the pipe first: that EPIPE is
    // no failure of the test, whose result is the exit code and output
    child.stdin!.on('error', () => {});
    child.stdin!.end(options.input ?? '');
  });
}

/** A spawned child's stdout and stderr and exit code once it closes; killed after `timeoutMs`. */
export function collectOutput(child: ChildProcess, timeoutMs: number): Promise<SvcResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface RunningSvc {
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  /** Everything the process printed so far. */
  output(): { stdout: string; stderr: string };
  /** SIGTERM, wait for exit (SIGKILL after the timeout); resolves with the exit code. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
}

export interface StartOptions extends RunOptions {
  /** Path polled until it answers (any HTTP status); default /healthz. */
  readyPath?: string;
  port?: number;
  readyTimeoutMs?: number;
}

/**
 * Every server started here and not yet exited. A test file whose test forgot (or failed before) a stop
 * would otherwise wait forever on the child's pipes: under `node --test` the file's root `after` kills any
 * left, so a leaked server fails nothing and hangs nothing.
 */
const live = new Set<ChildProcess>();
if (process.env.NODE_TEST_CONTEXT) {
  after(() => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/**
 * Starts a long-running `svc` command (args should include `--port` placeholders via `{port}`). Ready means
 * the path answers and this process has logged that it listens: a free port picked here can be taken by
 * another test's server before svc binds it, and that server's answer must not pass for svc's. A start
 * refused for such a taken port is retried on a fresh one (only when the port was picked here).
 */
export async function startSvc(args: string[], options: StartOptions = {}): Promise<RunningSvc> {
  ensureBuilt();
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    try {
      return await startOn(port, args, options);
    } catch (err) {
      if (!(err instanceof PortTaken) || options.port !== undefined || attempt >= 5) throw err;
    }
  }
}

class PortTaken extends Error {}

async function startOn(port: number, args: string[], options: StartOptions): Promise<RunningSvc> {
  const child = spawn(NODE, [SVC_BIN, ...args.map((a) => a.replaceAll('{port}', String(port)))], {
    cwd: options.cwd ?? ROOT,
    env: options.env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d) => {
    stdout += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d) => {
    stderr += d;
  });
  live.add(child);
  const exited = new Promise<number | null>((r) =>
    child.on('exit', (code) => {
      live.delete(child);
      r(code);
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 15_000);
  for (;;) {
    if (child.exitCode !== null) {
      const message = `svc ${args.join(' ')} exited with ${child.exitCode} before ready:\n${stderr}\n${stdout}`;
      throw stderr.includes(`Cannot listen on 127.0.0.1:${port}`)
        ? new PortTaken(message)
        : new Error(message);
    }
    if (LISTENING.test(stdout + stderr)) {
      try {
        await fetch(`${url}${options.readyPath ?? '/healthz'}`);
        break;
      } catch {
        // listening was logged a moment before the first connection is taken
      }
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`svc ${args.join(' ')} did not become ready:\n${stderr}\n${stdout}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    port,
    url,
    output: () => ({ stdout, stderr }),
    async stop(signal = 'SIGTERM', timeoutMs = 35_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** The log line each server writes once bound (`gateway listening`, `agent server listening`, `forwarding`). */
const LISTENING = /"msg":"(?:[a-z ]*listening|forwarding)"/;

/** The request-log line (stdout) `svc` wrote for `requestId`, once it has written it. */
export function requestLogLine(svc: RunningSvc, requestId: string): Promise<Record<string, unknown>> {
  const find = () =>
    svc
      .output()
      .stdout.split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'request' && l.request_id === requestId);
  return new Promise((resolve) => {
    const check = () => {
      const line = find();
      if (!line) return;
      svc.child.stdout?.off('data', check);
      resolve(line);
    };
    svc.child.stdout?.on('data', check);
    check();
  });
}

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePromise(port));
    });
  });
}

// --- internal ---

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}
