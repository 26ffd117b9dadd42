/**
 * Closed-loop traffic that remembers every answer: `connections` workers cycle through the request kinds
 * until stopped, each answer kept with its `svc-request-id`, so the trace store can be checked against
 * what clients actually received.
 */
import { Agent } from 'undici';
import type { BenchRequest } from '../requests.ts';
import { type Answer, send } from './answers.ts';

export interface Traffic {
  /** No new request starts after this; requests in flight run to their end (or their socket's). */
  stop(): void;
  /** Resolves with every answer once all workers have returned. */
  done: Promise<Answer[]>;
  /** Answers so far. */
  readonly count: number;
}

/** Starts the workers at once; the caller decides when to stop them. */
export function startTraffic(url: string, requests: BenchRequest[], connections: number): Traffic {
  const agent = new Agent({ connections, pipelining: 1, keepAliveTimeout: 10_000 });
  const answers: Answer[] = [];
  let stopped = false;
  let next = 0;
  const worker = async () => {
    while (!stopped) {
      const req = requests[next++ % requests.length];
      const answer = await send(url, req, agent, 30_000);
      answers.push(answer);
      // the server is gone: the next request would only be refused
      if (answer.error === 'ECONNREFUSED') break;
    }
  };
  const workers = Array.from({ length: connections }, worker);
  const done = Promise.all(workers).then(async () => {
    await agent.destroy().catch(() => {});
    return answers;
  });
  return {
    stop() {
      stopped = true;
    },
    done,
    get count() {
      return answers.length;
    },
  };
}
