/**
 * A TCP relay on a local port to another address, for outages that are real to the client: `down` cuts
 * every relayed connection and refuses new ones (connection refused), `up` listens again on the same port.
 * `reset` cuts every relayed connection and keeps accepting, closing each new one at once, and counts
 * them (`resets`): how many times the client tried meanwhile.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import type { TestContext } from 'node:test';
import type { TestPostgres } from './postgres.ts';
import { freePort } from './svc.ts';

export interface TcpRelay {
  readonly port: number;
  up(): Promise<void>;
  down(): void;
  reset(): void;
  /** Holds every byte in both directions (connections stay open, new ones hang) until `thaw`. */
  freeze(): void;
  /**
   * Ends the server's side of every relayed connection and drops what the client sends on it, leaving
   * the client's side open: a connection whose network died silently (the server ended its session,
   * the client hears nothing). New connections are relayed as usual.
   */
  sever(): void;
  thaw(): void;
  /**
   * The network of every relayed connection dies silently for both ends: bytes are dropped both ways, and
   * neither side hears the other close (the server keeps its session). New connections are relayed as usual.
   */
  partition(): void;
  /** Ends both sides of the partitioned connections (the server notices at last). */
  heal(): void;
  /** Connections closed at once since the last `reset()`. */
  readonly resets: number;
}

export async function startTcpRelay(host: string, port: number): Promise<TcpRelay> {
  const relayPort = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let resetting = false;
  let resets = 0;
  // frozen: bytes are held, in both directions, until thawed (a server that hangs, a black hole)
  let frozen = false;
  let held: Array<[Socket, Buffer]> = [];
  // the server's side of each relayed connection, and those severed (their client side kept open)
  const outbounds = new Set<Socket>();
  const severed = new WeakSet<Socket>();
  // the client's side of each relayed connection, by its server's side; and those partitioned
  const inbounds = new WeakMap<Socket, Socket>();
  const partitioned = new Set<Socket>();
  const forward = (to: Socket, d: Buffer) => {
    if (frozen) held.push([to, d]);
    else to.write(d);
  };
  const up = () => {
    resetting = false;
    if (server) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const s = createServer((inbound) => {
        if (resetting) {
          resets++;
          inbound.destroy();
          return;
        }
        const outbound = tcpConnect(port, host);
        outbounds.add(outbound);
        outbound.on('close', () => outbounds.delete(outbound));
        inbounds.set(outbound, inbound);
        for (const end of [inbound, outbound]) {
          sockets.add(end);
          end.on('error', () => undefined);
          end.on('close', () => {
            sockets.delete(end);
            if (severed.has(outbound) && end === outbound) return;
            if (partitioned.has(outbound)) return;
            inbound.destroy();
            outbound.destroy();
          });
        }
        inbound.on('data', (d: Buffer) => {
          if (!severed.has(outbound) && !partitioned.has(outbound)) forward(outbound, d);
        });
        outbound.on('data', (d: Buffer) => {
          if (!partitioned.has(outbound)) forward(inbound, d);
        });
      });
      s.once('error', reject);
      s.listen(relayPort, '127.0.0.1', () => {
        server = s;
        resolve();
      });
    });
  };
  await up();
  return {
    port: relayPort,
    up,
    down() {
      server?.close();
      server = undefined;
      for (const s of sockets) s.destroy();
    },
    freeze() {
      frozen = true;
    },
    sever() {
      for (const outbound of outbounds) {
        severed.add(outbound);
        outbound.destroy();
      }
    },
    partition() {
      for (const outbound of outbounds) partitioned.add(outbound);
    },
    heal() {
      for (const outbound of partitioned) {
        outbound.destroy();
        inbounds.get(outbound)?.destroy();
      }
      partitioned.clear();
    },
    thaw() {
      frozen = false;
      for (const [to, d] of held.splice(0)) if (!to.destroyed) to.write(d);
      held = [];
    },
    reset() {
      resetting = true;
      resets = 0;
      for (const s of sockets) s.destroy();
    },
    get resets() {
      return resets;
    },
  };
}

/**
 * A fresh database of the test's PostgreSQL reached through a relay (taken down after the test): the
 * direct URL, the relay, and the URL through it, for outages the client meets on a real connection.
 */
export async function databaseBehindRelay(
  t: TestContext,
  postgres: TestPostgres,
): Promise<{ direct: URL; relay: TcpRelay; viaRelay: URL }> {
  const direct = new URL(await postgres.createDatabase());
  const relay = await startTcpRelay(direct.hostname, Number(direct.port));
  t.after(() => relay.down());
  const viaRelay = new URL(direct);
  viaRelay.port = String(relay.port);
  return { direct, relay, viaRelay };
}
