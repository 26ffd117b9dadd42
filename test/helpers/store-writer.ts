/**
 * Starts test/fixtures/store-writer.ts (the real store, bus and trace writer in a child process) and
 * waits for a line of its output. Killed in `after` if still running.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './svc.ts';

export interface StoreWriterChild {
  readonly child: ChildProcess;
  /** Resolves when the child printed a line starting with `prefix`. */
  waitFor(prefix: string): Promise<void>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  output(): { stdout: string; stderr: string };
  /** Ends stdin (a `hold` child then closes its store and exits) and waits for the exit. */
  release(): Promise<number | null>;
}

export function startStoreWriter(
  args: string[],
  t: { after: (fn: () => unknown) => void },
): StoreWriterChild {
  const child = spawn(process.execPath, [join(ROOT, 'test/fixtures/store-writer.ts'), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  const waiters: Array<{ prefix: string; resolve: () => void }> = [];
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    for (const w of [...waiters]) {
      if (stdout.split('\n').some((l) => l.startsWith(w.prefix))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return {
    child,
    exited,
    output: () => ({ stdout, stderr }),
    waitFor(prefix) {
      if (stdout.split('\n').some((l) => l.startsWith(prefix))) return Promise.resolve();
      return new Promise((resolve, reject) => {
        waiters.push({ prefix, resolve });
        void exited.then((code) =>
          reject(new Error(`store writer exited (${code}) before "${prefix}":\n${stderr}\n${stdout}`)),
        );
      });
    },
    release() {
      child.stdin?.end();
      return exited;
    },
  };
}
