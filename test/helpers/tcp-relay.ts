/**
 * A TCP relay on a local port to another address, for outages that are real to the client: `down` cuts
 * every relayed connection and refuses new ones (connection refused), `up` listens again on the same port.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { freePort } from './svc.ts';

export interface TcpRelay {
  readonly port: number;
  up(): Promise<void>;
  down(): void;
}

export async function startTcpRelay(host: string, port: number): Promise<TcpRelay> {
  const relayPort = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const up = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((inbound) => {
        const outbound = tcpConnect(port, host);
        for (const end of [inbound, outbound]) {
          sockets.add(end);
          end.on('error', () => undefined);
          end.on('close', () => {
            sockets.delete(end);
            inbound.destroy();
            outbound.destroy();
          });
        }
        inbound.pipe(outbound).pipe(inbound);
      });
      s.once('error', reject);
      s.listen(relayPort, '127.0.0.1', () => {
        server = s;
        resolve();
      });
    });
  await up();
  return {
    port: relayPort,
    up,
    down() {
      server?.close();
      server = undefined;
      for (const s of sockets) s.destroy();
    },
  };
}
