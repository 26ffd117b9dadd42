/**
 * The servers of the gateway benchmark, each a child process pinned to one core with taskset (which execs,
 * so the child's pid is the server's pid for /proc accounting): the fake provider, the do-nothing
 * passthrough proxy, and the real built `svc gateway` with a private keystore, trace store and one key.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { type GatewayFiles, gatewayFiles, issueKey } from '../helpers/gateway-keys.ts';
import { freePort, makeTempDir, ROOT, SVC_BIN } from '../helpers/svc.ts';

export interface BenchProcess {
  readonly name: string;
  readonly pid: number;
  readonly url: string;
  /** The last few KiB the process wrote to stderr. */
  stderr(): string;
  stop(): Promise<void>;
  /** SIGKILL (no clean-up of any kind in the process) and wait for it to be gone. */
  kill9(): Promise<void>;
}

export interface BenchGateway extends BenchProcess {
  /** A gateway key accepted by this gateway. */
  readonly token: string;
}

/** The fake provider on its own port, pinned to `core`. */
export async function startFake(core: number): Promise<BenchProcess> {
  const port = await freePort();
  return spawnPinned('fake', core, [join(ROOT, 'test/bench/fake-upstream.ts'), String(port)], { port });
}

/** The do-nothing proxy (Hono + undici.request) in front of `upstream`, pinned to `core`. */
/** The floor (b), node:http; or `hono`, the same floor on the gateway's framework (h). */
export async function startPassthrough(
  core: number,
  upstream: string,
  kind: 'node' | 'hono' = 'node',
): Promise<BenchProcess> {
  const port = await freePort();
  const script = join(
    ROOT,
    kind === 'node' ? 'test/bench/passthrough-proxy.ts' : 'test/bench/passthrough-hono.ts',
  );
  return spawnPinned(`passthrough-${kind}`, core, [script, String(port), upstream], { port });
}

/** A gateway's private keystore and trace store in a temp dir, with one key issued (args: issue-key flags). */
export interface GatewayHome {
  readonly files: GatewayFiles;
  /** The token of the key issued at creation. */
  readonly token: string;
  /** Issues one more key into this keystore (e.g. with `--daily-cap-usd`). */
  issueKey(args: string[]): Promise<{ keyId: string; token: string }>;
  cleanup(): void;
}

/** A home for `svc gateway` in front of the fake at `upstream`; `env` adds or overrides variables. */
export async function createGatewayHome(
  upstream: string,
  env: Record<string, string | undefined> = {},
): Promise<GatewayHome> {
  const tmp = makeTempDir('svc-bench-');
  const files = gatewayFiles(tmp.dir, {
    ANTHROPIC_API_KEY: 'sk-ant-bench',
    OPENAI_API_KEY: 'sk-openai-bench',
    ANTHROPIC_BASE_URL: upstream,
    OPENAI_BASE_URL: `${upstream}/v1`,
    ...env,
  });
  try {
    const { token } = await issueKey(files.env, []);
    return { files, token, issueKey: (args) => issueKey(files.env, args), cleanup: tmp.cleanup };
  } catch (err) {
    tmp.cleanup();
    throw err;
  }
}

/**
 * `svc gateway` from dist/ (built if stale) on `home`'s keystore and trace store, pinned to `core`;
 * `nodeFlags` go to node (e.g. --cpu-prof). Stopping it leaves the home in place.
 */
export async function launchGateway(
  core: number,
  home: GatewayHome,
  nodeFlags: string[] = [],
): Promise<BenchGateway> {
  const port = await freePort();
  const proc = await spawnPinned('svc', core, [...nodeFlags, SVC_BIN, 'gateway', '--port', String(port)], {
    port,
    env: home.files.env,
    readyPath: '/healthz',
  });
  return { ...proc, token: home.token };
}

/**
 * `svc gateway` in front of the fake at `upstream` on a fresh home (removed when it stops), with its
 * default auth, routing, pricing, trace store and metrics; `nodeFlags` go to node (e.g. --cpu-prof).
 */
export async function startGateway(
  core: number,
  upstream: string,
  nodeFlags: string[] = [],
): Promise<BenchGateway> {
  const home = await createGatewayHome(upstream);
  try {
    const proc = await launchGateway(core, home, nodeFlags);
    return {
      ...proc,
      async stop() {
        await proc.stop();
        home.cleanup();
      },
    };
  } catch (err) {
    home.cleanup();
    throw err;
  }
}

/** Runs `node <argv>` under `taskset -c <core>` and waits until it answers HTTP on `port`. */
export async function spawnPinned(
  name: string,
  core: number,
  argv: string[],
  options: { port: number; env?: NodeJS.ProcessEnv; readyPath?: string },
): Promise<BenchProcess> {
  // stdout (the gateway's request log) goes to /dev/null: written as in production, never read back.
  const child = spawn('taskset', ['-c', String(core), process.execPath, ...argv], {
    cwd: ROOT,
    env: options.env ?? process.env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-4096);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${options.port}`;
  await waitReady(child, `${url}${options.readyPath ?? '/'}`, () => `${name}: ${stderr}`);
  return {
    name,
    pid: child.pid!,
    url,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
    async kill9() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

// --- internal ---

async function waitReady(child: ChildProcess, url: string, describe: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} before ready: ${describe()}`);
    try {
      const res = await fetch(url);
      await res.body?.cancel();
      return;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`not ready after 20 s: ${describe()}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
