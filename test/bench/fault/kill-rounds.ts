/**
 * Kill -9 under load: a fresh gateway takes closed-loop traffic (every shape, streaming and not) and is
 * SIGKILLed mid-load. Every request the client received whole must have its `llm.call_completed` in the
 * store (the gateway sends the last byte only after the commit); the store must pass integrity_check;
 * calls left `llm.call_started` are counted and, after a restart on the same store, looked up in any
 * `bus.gap_detected` the gateway writes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createGatewayHome, type GatewayHome, launchGateway } from '../processes.ts';
import { benchRequest, SHAPES } from '../requests.ts';
import type { Answer } from './answers.ts';
import {
  completedTurns,
  gapReports,
  integrity,
  lastEventId,
  namedByGaps,
  openCalls,
  walMiB,
  withStore,
} from './store-checks.ts';
import { startTraffic } from './traffic.ts';

export interface KillRoundOptions {
  upstream: string;
  core: number;
  rounds: number;
  /** Load before the kill (a random 0–0.5 s is added so the kill lands at a different point each round). */
  seconds: number;
  connections: number;
  /** How long the restarted gateway runs before its graceful stop. */
  restartMs: number;
  note: (line: string) => void;
}

export interface KillRound {
  round: number;
  /** Requests whose response head arrived, complete or not. */
  responses: number;
  /** Status 200, whole body, with `svc-request-id`. */
  answered: number;
  /** Answered requests whose turn has no `llm.call_completed`: must be 0. */
  answeredWithoutEvent: number;
  integrity: string;
  /** `llm.call_started` with no closing event, after the kill. */
  openCalls: number;
  /** Of those, how many a `bus.gap_detected` written by the restarted gateway names. */
  namedByGap: number;
  gapEvents: number;
  /** Still without a closing event after the restart. */
  openAfterRestart: number;
  maxWalMiB: number;
}

export async function runKillRounds(o: KillRoundOptions): Promise<KillRound[]> {
  const rounds: KillRound[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    rounds.push(await killRound(round, o));
    const r = rounds[rounds.length - 1];
    o.note(
      `kill round ${round}: ${r.answered} answered, ${r.answeredWithoutEvent} without event, ` +
        `integrity ${r.integrity}, ${r.openCalls} open calls, ${r.namedByGap} named by a gap report`,
    );
  }
  return rounds;
}

// --- internal ---

async function killRound(round: number, o: KillRoundOptions): Promise<KillRound> {
  const home = await createGatewayHome(o.upstream);
  try {
    const { answers, maxWal } = await loadAndKill(home, o);
    const answered = answers.filter((a) => a.complete && a.requestId !== null);
    const before = withStore(home.files.db, (db) => {
      const completed = completedTurns(db);
      return {
        integrity: integrity(db),
        missing: answered.filter((a) => !completed.has(a.requestId as string)).length,
        open: openCalls(db),
        lastId: lastEventId(db),
      };
    });
    const again = await launchGateway(o.core, home);
    try {
      await sleep(o.restartMs);
    } finally {
      await again.stop();
    }
    const after = withStore(home.files.db, (db) => ({
      reports: gapReports(db, before.lastId),
      stillOpen: openCalls(db).filter((c) => before.open.some((b) => b.id === c.id)).length,
    }));
    return {
      round,
      responses: answers.filter((a) => a.status !== 0).length,
      answered: answered.length,
      answeredWithoutEvent: before.missing,
      integrity: before.integrity,
      openCalls: before.open.length,
      namedByGap: namedByGaps(before.open, after.reports),
      gapEvents: after.reports.length,
      openAfterRestart: after.stillOpen,
      maxWalMiB: Math.round(maxWal * 10) / 10,
    };
  } finally {
    home.cleanup();
  }
}

/** A gateway on `home` under traffic, SIGKILLed mid-load; every answer the clients got. */
async function loadAndKill(
  home: GatewayHome,
  o: KillRoundOptions,
): Promise<{ answers: Answer[]; maxWal: number }> {
  const gw = await launchGateway(o.core, home);
  let maxWal = 0;
  const walTimer = setInterval(() => {
    maxWal = Math.max(maxWal, walMiB(home.files.db));
  }, 200);
  try {
    const requests = SHAPES.flatMap((shape) => [
      benchRequest(shape, gw.token),
      // streams dripping a frame every 10 ms are still open when the kill lands
      benchRequest(shape, gw.token, { stream: true, dripMs: 10 }),
    ]);
    const traffic = startTraffic(gw.url, requests, o.connections);
    await sleep(o.seconds * 1000 + Math.random() * 500);
    await gw.kill9();
    traffic.stop();
    return { answers: await traffic.done, maxWal };
  } finally {
    clearInterval(walTimer);
    await gw.kill9();
  }
}
