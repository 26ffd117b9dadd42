/**
 * @module The lines `svc chat` reads: prompts and confirmation answers from one queue, on a terminal with a
 * readline prompt, from a pipe one line at a time. Ctrl-C on the terminal and SIGINT from outside both reach
 * `onInterrupt`.
 */
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';

export interface LineSource {
  readonly interactive: boolean;
  /** The next line (typed ahead or awaited), or null once the input ended or was closed; `prompt` shows on a terminal. */
  next(prompt: string): Promise<string | null>;
  onInterrupt(fn: () => void): void;
  close(): void;
}

export function createLineSource(
  input: NodeJS.ReadableStream & { isTTY?: boolean },
  output: Writable,
): LineSource {
  const interactive = input.isTTY === true;
  const rl = createInterface({ input, output: interactive ? output : undefined, terminal: interactive });
  const queued: string[] = [];
  let waiter: ((line: string | null) => void) | undefined;
  let ended = false;
  const interrupts: Array<() => void> = [];
  const interrupt = () => {
    for (const fn of interrupts) fn();
  };
  rl.on('line', (line) => {
    if (waiter) {
      const w = waiter;
      waiter = undefined;
      w(line);
    } else queued.push(line);
  });
  rl.on('close', () => {
    ended = true;
    waiter?.(null);
    waiter = undefined;
  });
  rl.on('SIGINT', interrupt);
  process.on('SIGINT', interrupt);
  return {
    interactive,
    next(prompt) {
      if (interactive) {
        rl.setPrompt(prompt);
        rl.prompt();
      }
      if (queued.length > 0) return Promise.resolve(queued.shift()!);
      if (ended) return Promise.resolve(null);
      return new Promise((resolve) => {
        waiter = resolve;
      });
    },
    onInterrupt(fn) {
      interrupts.push(fn);
    },
    close() {
      process.off('SIGINT', interrupt);
      rl.close();
      if (!interactive) input.pause();
    },
  };
}
