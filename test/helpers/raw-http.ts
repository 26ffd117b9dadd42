/**
 * HTTP as raw bytes, for what no HTTP client sends (malformed requests, headers over the server's limit,
 * a request that never ends): the bytes go as they are to a fresh connection on 127.0.0.1.
 */
import { connect } from 'node:net';

/** Writes `bytes` to a fresh connection; resolves with everything the server sent once the connection closed. */
export function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.setEncoding('utf8').on('data', (d) => {
      received += d;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}
