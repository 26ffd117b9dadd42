/**
 * @module The lines `svc chat` reads: prompts and confirmation answers from one queue, on a terminal with a
 * readline prompt, from a pipe one line at a time. Waits nest: a question asked while the prompt waits (a
 * confirmation of a turn another client started) takes the next line, then the prompt waits again. Ctrl-C
 * on the terminal and SIGINT from outside both reach `onInterrupt`.
 */
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';

export interface LineSource {
  readonly interactive: boolean;
  /**
   * The next line (typed ahead or awaited), or null once the input ended or was closed, or `signal` withdrew
   * the wait; `prompt` shows on a terminal. The latest wait takes the next line.
   */
  next(prompt: string, signal?: AbortSignal): Promise<string | null>;
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
  /** Waits in the order they began: the last one takes the next line. */
  const waiting: Array<{ prompt: string; resolve: (line: string | null) => void }> = [];
  let ended = false;
  const interrupts: Array<() => void> = [];
  const interrupt = () => {
    for (const fn of interrupts) fn();
  };
  /** The wait below the one that ended shows its prompt again (the question it let go first is over). */
  const reprompt = () => {
    const below = waiting.at(-1);
    if (below && interactive && !ended) {
      rl.setPrompt(below.prompt);
      rl.prompt();
    }
  };
  rl.on('line', (line) => {
    const w = waiting.pop();
    if (!w) return queued.push(line);
    w.resolve(line);
    reprompt();
  });
  rl.on('close', () => {
    ended = true;
    for (const w of waiting.splice(0)) w.resolve(null);
  });
  rl.on('SIGINT', interrupt);
  process.on('SIGINT', interrupt);
  return {
    interactive,
    next(prompt, signal) {
      if (interactive) {
        rl.setPrompt(prompt);
        rl.prompt();
      }
      if (queued.length > 0) return Promise.resolve(queued.shift()!);
      if (ended || signal?.aborted) return Promise.resolve(null);
      return new Promise((resolve) => {
        const w = { prompt, resolve };
        waiting.push(w);
        signal?.addEventListener(
          'abort',
          () => {
            const i = waiting.indexOf(w);
            if (i < 0) return;
            waiting.splice(i, 1);
            resolve(null);
            if (i === waiting.length) reprompt();
          },
          { once: true },
        );
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
