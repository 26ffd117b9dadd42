/**
 * A TCP relay in front of the agent server that can cut every connection and refuse WebSocket upgrades
 * while REST goes through (what a client sees from a server that answers REST before its stream is back),
 * and that counts the turn submissions going by.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface UpgradeRefusingRelay {
  readonly url: string;
  /** While true, a connection opening with a WebSocket upgrade is closed at once. */
  refuseUpgrades: boolean;
  /** Upgrades refused so far. */
  readonly refused: number;
  /** POST /sessions/{id}/turns seen so far. */
  readonly submissions: number;
  /** Cuts every relayed connection (the sockets see a drop, code 1006). */
  cut(): void;
}

export async function startUpgradeRefusingRelay(
  port: number,
  t: { after(fn: () => void): void },
): Promise<UpgradeRefusingRelay> {
  const sockets = new Set<Socket>();
  let refused = 0;
  let submissions = 0;
  const state = { refuseUpgrades: false };
  const relay = createServer((client) => {
    client.once('data', (first) => {
      const head = first.toString('latin1');
      if (state.refuseUpgrades && /^upgrade: websocket/im.test(head)) {
        refused++;
        client.destroy();
        return;
      }
      const upstream = connect(port, '127.0.0.1');
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      const count = (d: Buffer) => {
        submissions += d.toString('latin1').match(/^POST \/sessions\/[^/ ]+\/turns /gm)?.length ?? 0;
      };
      count(first);
      upstream.write(first);
      client.on('data', count);
      client.pipe(upstream).pipe(client);
    });
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
  t.after(() => relay.close());
  return {
    url: `http://127.0.0.1:${(relay.address() as { port: number }).port}`,
    get refuseUpgrades() {
      return state.refuseUpgrades;
    },
    set refuseUpgrades(v: boolean) {
      state.refuseUpgrades = v;
    },
    get refused() {
      return refused;
    },
    get submissions() {
      return submissions;
    },
    cut() {
      for (const s of sockets) s.destroy();
    },
  };
}
