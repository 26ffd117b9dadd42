/**
 * `svc chat` as a child process driven through its pipes: what it printed so far, a wait for a line, its
 * exit. Killed after the test file if still running.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { after } from 'node:test';
import { ensureBuilt, SVC_BIN } from './svc.ts';

export interface Chat {
  child: ChildProcess;
  /** Everything printed on stdout so far. */
  out(): string;
  err(): string;
  /** Resolves once stdout matches. */
  waitFor(re: RegExp): Promise<void>;
  exit: Promise<number | null>;
}

/** Starts `svc chat --server <url> <args>`; `input`, when given, is all of its stdin. */
export function startChat(url: string, env: NodeJS.ProcessEnv, args: string[], input?: string): Chat {
  ensureBuilt();
  const child = spawn(process.execPath, [SVC_BIN, 'chat', '--server', url, ...args], {
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  child.stdout!.setEncoding('utf8').on('data', (d) => {
    out += d;
    for (const w of waiters.splice(0)) w();
  });
  child.stderr!.setEncoding('utf8').on('data', (d) => {
    err += d;
  });
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  after(() => child.kill('SIGKILL'));
  if (input !== undefined) child.stdin!.end(input);
  return {
    child,
    out: () => out,
    err: () => err,
    exit,
    waitFor(re) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (re.test(out)) return resolve();
          if (child.exitCode !== null) return reject(new Error(`chat exited first:\n${out}\n${err}`));
          waiters.push(check);
        };
        child.once('exit', () => check());
        check();
      });
    },
  };
}

/** The session id `svc chat` printed in its first line. */
export const sessionOf = (out: string) => /session (sess_[0-9A-Z]{26})/.exec(out)![1];
