/**
 * Slow clients over raw sockets: request headers trickled one byte a second, and a request body
 * trickled one byte every 2 s after complete headers. Each reports how the gateway ended it (an HTTP
 * status such as 408, or a closed connection) and after how long, or that it was still open at the cap.
 */
import { connect } from 'node:net';

export interface SlowResult {
  name: string;
  /** `408`, another status, `closed`, or `open` (still waiting when the cap was reached). */
  outcome: string;
  seconds: number;
}

export async function runSlowClients(url: string, token: string, capS: number): Promise<SlowResult[]> {
  const { hostname, port } = new URL(url);
  const target = { host: hostname, port: Number(port) };
  const head = 'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n';
  const body = JSON.stringify({ model: 'openai:gpt-5-mini', messages: [{ role: 'user', content: 'hi' }] });
  const fullHead = `${head}Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  return Promise.all([
    trickle('headers one byte a second', target, head, `X-Slow: ${'a'.repeat(10_000)}`, 1000, capS),
    trickle('body one byte every 2 s', target, fullHead, body, 2000, capS),
  ]);
}

// --- internal ---

function trickle(
  name: string,
  target: { host: string; port: number },
  /** Written at once on connect. */
  first: string,
  /** Then written one character every `everyMs`. */
  rest: string,
  everyMs: number,
  capS: number,
): Promise<SlowResult> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const seconds = () => Math.round((performance.now() - t0) / 100) / 10;
    const socket = connect(target);
    let timer: NodeJS.Timeout | undefined;
    let answer = '';
    let settled = false;
    const finish = (outcome: string) => {
      if (settled) return;
      settled = true;
      clearInterval(timer);
      clearTimeout(cap);
      socket.destroy();
      resolve({ name, outcome, seconds: seconds() });
    };
    const cap = setTimeout(() => finish('open'), capS * 1000);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      answer += d;
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (status) finish(status[1]);
    });
    socket.on('close', () => finish('closed'));
    socket.on('error', () => finish('closed'));
    socket.on('connect', () => {
      socket.write(first);
      let i = 0;
      timer = setInterval(() => {
        if (i < rest.length) socket.write(rest[i++]);
      }, everyMs);
    });
  });
}
