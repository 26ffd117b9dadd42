/**
 * A client that trickles its request holds a connection only as long as SVC_GATEWAY_HEADERS_TIMEOUT_MS
 * (headers) and SVC_GATEWAY_REQUEST_TIMEOUT_MS (the whole request) allow: it gets 408 or a closed socket,
 * and nothing reaches the provider. Answers are not bound by either: a stream or a slow answer that takes
 * longer than the request timeout is delivered whole (issue 17 item 5: Node's defaults held such
 * connections for minutes). A streaming client that stops taking its answer is read for only as fast as it
 * takes it, and cut off once it has taken nothing for SVC_GATEWAY_STREAM_IDLE_TIMEOUT_MS (it held the
 * stream and the provider's connection open for ever). The limits here are small; the trickles last far
 * longer than them.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { gatewayFiles, issueKey, readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { rawExchange } from '../helpers/raw-http.ts';
import { freePort, makeTempDir, type RunningSvc, requestLogLine, runSvc } from '../helpers/svc.ts';

const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 1000;
/** How long a streaming client may take nothing before it is cut off (the stream idle timeout). */
const STREAM_IDLE_TIMEOUT_MS = 1000;
const STEP_MS = 100;
/** Every frame of the long streams waits this long: 24 words take ≥ 2.4 s, beyond the request timeout. */
const DRIP_MS = 100;

interface Trickled {
  /** Everything the gateway sent back. */
  received: string;
  /** Whether the gateway closed the socket before the client sent its last byte. */
  closedEarly: boolean;
}

/** Sends `head` at once, then `slow` one byte every STEP_MS, then `tail`; reads until the socket closes. */
function trickle(port: number, head: string, slow: string, tail: string): Promise<Trickled> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let closed = false;
    let sentAll = false;
    socket.setEncoding('utf8');
    socket.on('data', (d) => {
      received += d;
    });
    socket.on('error', () => {}); // a reset counts as a close
    socket.on('close', () => {
      closed = true;
      resolve({ received, closedEarly: !sentAll });
    });
    socket.once('connect', async () => {
      try {
        socket.write(head);
        for (const ch of slow) {
          await sleep(STEP_MS);
          if (closed) return;
          socket.write(ch);
        }
        if (closed) return;
        sentAll = true;
        socket.end(tail);
      } catch (err) {
        reject(err);
      }
    });
  });
}

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: Record<string, unknown>;
}

/** Sends `bytes` and then nothing (the socket stays open); parses what comes back before the gateway closes. */
async function sendAndWait(port: number, bytes: string): Promise<RawAnswer> {
  const received = await rawExchange(port, bytes);
  const [head = '', body = ''] = received.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = new Map(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  try {
    return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
  } catch {
    throw new Error(`not an answer with a JSON body: ${received}`);
  }
}

/** The answer names its request under the three headers, says whether to retry and closes the connection. */
async function assertNamedAnswer(gw: RunningSvc, a: RawAnswer, status: number, code: string, retry: string) {
  assert.equal(a.status, status, JSON.stringify(a.body));
  const id = a.headers.get('svc-request-id');
  assert.ok(id, 'a request id');
  assert.equal(a.headers.get('request-id'), id);
  assert.equal(a.headers.get('x-request-id'), id);
  assert.equal(a.headers.get('x-should-retry'), retry);
  assert.equal(a.headers.get('connection'), 'close');
  assert.match(a.headers.get('content-type') ?? '', /^application\/json/);
  const line = await requestLogLine(gw, id);
  assert.equal(line.status, status, JSON.stringify(line));
  assert.equal(line.error_code, code, JSON.stringify(line));
}

function assertCutOff(result: Trickled): void {
  const status = /^HTTP\/1\.1 (\d{3})/.exec(result.received)?.[1];
  assert.ok(result.closedEarly, `the gateway closed the connection early; it answered: ${result.received}`);
  assert.ok(status === undefined || status === '408', `408 or a bare close, got: ${result.received}`);
}

/** 16 MiB of answer: far more than the kernel's socket buffers hold for a client that reads nothing. */
const LONG_ANSWER_BYTES = 16 * 1024 * 1024;

interface StalledClient {
  /** The request id of the answer's head. */
  id: string;
  /** Reads on from where the client stopped until the gateway's close; resolves with all it received. */
  rest(): Promise<string>;
}

/** Asks for a long answer, takes the head's first bytes, then reads nothing (the socket stays open). */
async function stalledClient(
  port: number,
  head: (length: number) => string,
  stream: boolean,
): Promise<StalledClient> {
  const body = JSON.stringify({
    model: 'anthropic:claude-haiku-4-5',
    max_tokens: 64_000,
    stream,
    messages: [{ role: 'user', content: `[[fake:long=${LONG_ANSWER_BYTES}]]` }],
  });
  const socket = connect(port, '127.0.0.1', () => socket.write(`${head(body.length)}\r\n${body}`));
  socket.on('error', () => {}); // the cut may come as a reset
  const closed = new Promise((resolve) => socket.once('close', resolve));
  let received = '';
  socket.setEncoding('utf8');
  await new Promise<void>((resolve) =>
    socket.once('data', (d) => {
      received += d;
      socket.pause(); // and read nothing more
      resolve();
    }),
  );
  const id = /svc-request-id: (\S+)/i.exec(received)?.[1];
  assert.ok(id, `an answer's head: ${received.slice(0, 300)}`);
  return {
    id,
    async rest() {
      socket.on('data', (d) => {
        received += d;
      });
      socket.resume();
      await closed;
      return received;
    },
  };
}

/** Resolves once the server's stderr holds `text`. */
function stderrIncludes(svc: RunningSvc, text: string): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!svc.output().stderr.includes(text)) return;
      svc.child.stderr?.off('data', check);
      resolve();
    };
    svc.child.stderr?.on('data', check);
    check();
  });
}

/**
 * Runs the cases at once (each waits out a timeout or a slow answer, so together they take as long as the
 * longest): the parent test lets its subtests run concurrently.
 */
function allAtOnce(t: TestContext, cases: [string, () => Promise<void>][]): Promise<unknown> {
  return Promise.all(cases.map(([name, fn]) => t.test(name, fn)));
}

test('slow clients are cut off after the header and request timeouts; slow answers are not', {
  timeout: 120_000,
  concurrency: true,
}, async (t) => {
  const stack = await startGatewayStack({
    env: {
      SVC_GATEWAY_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      SVC_GATEWAY_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      SVC_GATEWAY_STREAM_IDLE_TIMEOUT_MS: String(STREAM_IDLE_TIMEOUT_MS),
    },
  });
  t.after(() => stack.stop());
  const { fake, gw, token } = stack;
  const body = JSON.stringify({
    model: 'anthropic:claude-haiku-4-5',
    max_tokens: 16,
    messages: [{ role: 'user', content: 'hello from a slow client' }],
  });
  const head = (length: number) =>
    'POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
    `x-api-key: ${token}\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n` +
    `content-length: ${length}\r\n`;

  // the clients that are cut off, all at once; none of them may reach the provider
  await allAtOnce(t, [
    [
      'headers sent one byte at a time get 408 or a close',
      async () => {
        // 150 header bytes at one per STEP_MS: 15 s, far beyond the header timeout
        const result = await trickle(
          gw.port,
          head(body.length),
          `x-pad: ${'a'.repeat(143)}`,
          `\r\n\r\n${body}`,
        );
        assertCutOff(result);
      },
    ],
    [
      'a connection that never sends a byte is closed',
      async () => {
        const socket = connect(gw.port, '127.0.0.1');
        socket.on('error', () => {});
        socket.resume(); // read the 408, so that 'close' can follow
        const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)));
        const gaveUp = sleep(15_000, false, { ref: false }); // does not hold the file open
        const early = await Promise.race([closed, gaveUp]);
        socket.destroy();
        assert.ok(early, 'the idle connection was closed by the gateway within 15 s');
      },
    ],
    [
      'a request that stops arriving gets 408 request_timeout with a body, an id and a log line',
      async () => {
        // both wait for their timeout at once: the headers', and the whole request's
        const [headers, bodyCut] = await Promise.all([
          sendAndWait(gw.port, head(body.length)),
          sendAndWait(gw.port, `${head(body.length)}\r\n${body.slice(0, 20)}`),
        ]);
        // the headers never ended: no path is known, so the service error body
        await assertNamedAnswer(gw, headers, 408, 'request_timeout', 'true');
        assert.equal((headers.body.error as { code: string }).code, 'request_timeout');
        assert.match(
          (headers.body.error as { message: string }).message,
          new RegExp(`within ${HEADERS_TIMEOUT_MS} ms`),
        );
        // the body never ended: the messages path answers in its own shape, as every error there
        await assertNamedAnswer(gw, bodyCut, 408, 'request_timeout', 'true');
        assert.equal(bodyCut.body.type, 'error');
        assert.equal((bodyCut.body.error as { code: string }).code, 'request_timeout');
        assert.equal(bodyCut.body.request_id, bodyCut.headers.get('request-id'));
      },
    ],
    [
      'malformed HTTP gets 400 / 431 with a body, an id and a log line',
      async () => {
        const [badHeader, tooLarge, badChunk, badProvider, badMessages, noPath] = await Promise.all([
          sendAndWait(gw.port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n'),
          sendAndWait(
            gw.port,
            `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nx-pad: ${'a'.repeat(20_000)}\r\n\r\n`,
          ),
          sendAndWait(
            gw.port,
            `${head(0).replace('content-length: 0\r\n', 'transfer-encoding: chunked\r\n')}\r\nzz\r\n{}\r\n`,
          ),
          sendAndWait(gw.port, 'GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n'),
          sendAndWait(
            gw.port,
            'POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}',
          ),
          // a target the Node adapter cannot make a URL of: it answered a bare 400 (no body, id or log line)
          sendAndWait(gw.port, 'OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
        ]);
        // spec 1: a service path's answers carry the version headers, as svc serve's refusals do; /v1/* never
        for (const a of [badHeader, tooLarge]) {
          assert.equal(a.headers.get('svc-api-version'), '1.0', JSON.stringify([...a.headers]));
          assert.ok(a.headers.get('svc-api-versions-supported'));
        }
        assert.equal(badProvider.status, 400);
        assert.equal(badProvider.headers.get('svc-api-version'), undefined);
        // refused before the app, a provider path's answer is still in its shape (it was the service body,
        // which the SDKs read without a type)
        assert.deepEqual(
          { ...(badProvider.body.error as object), message: '' },
          { message: '', type: 'invalid_request_error', param: null, code: 'invalid_request' },
        );
        await assertNamedAnswer(gw, badMessages, 400, 'invalid_request', 'false');
        assert.equal(badMessages.body.type, 'error');
        assert.equal((badMessages.body.error as { type: string }).type, 'invalid_request_error');
        assert.equal(badMessages.body.request_id, badMessages.headers.get('request-id'));
        await assertNamedAnswer(gw, noPath, 400, 'invalid_request', 'false');
        assert.equal((noPath.body.error as { code: string }).code, 'invalid_request');
        await assertNamedAnswer(gw, badHeader, 400, 'invalid_request', 'false');
        assert.equal((badHeader.body.error as { code: string }).code, 'invalid_request');
        await assertNamedAnswer(gw, tooLarge, 431, 'request_headers_too_large', 'false');
        assert.equal((tooLarge.body.error as { code: string }).code, 'request_headers_too_large');
        // a bad chunk size once the request reached the messages path: its own shape
        await assertNamedAnswer(gw, badChunk, 400, 'invalid_request', 'false');
        assert.equal(badChunk.body.type, 'error');
        assert.doesNotMatch(gw.output().stdout, /aaaaaaaa|no colon here/, 'the bytes sent are not logged');
        // an expectation other than 100-continue is ignored (RFC 9110 allows it), not a bare 417
        const expect = await sendAndWait(
          gw.port,
          'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: something-else\r\nConnection: close\r\n\r\n',
        );
        assert.equal(expect.status, 200, JSON.stringify(expect.body));
        assert.equal(expect.body.status, 'ok');
        assert.ok(expect.headers.get('svc-request-id'), 'a request id');
        // Expect: 100-continue for a body over the limit: the 413 instead of 100 Continue, so it is never sent
        const oversize = await sendAndWait(gw.port, `${head(40 * 1024 * 1024)}expect: 100-continue\r\n\r\n`);
        assert.equal(oversize.status, 413, JSON.stringify(oversize.body));
        assert.equal(oversize.body.type, 'error');
        assert.equal(oversize.headers.get('connection'), 'close');
      },
    ],
    [
      'a body sent one byte at a time gets 408 or a close',
      async () => {
        // complete headers at once, then the body over ~body.length × STEP_MS (> 10 s)
        assert.ok(body.length * STEP_MS > 5 * REQUEST_TIMEOUT_MS);
        const result = await trickle(gw.port, `${head(body.length)}\r\n`, body.slice(0, -1), body.slice(-1));
        assertCutOff(result);
      },
    ],
  ]);
  assert.equal(fake.requests.length, 0, 'no upstream request from a client that was cut off');

  // the slow answers, all at once; each asks the fake for its timing in its own text
  const words = Array.from({ length: 24 }, (_, i) => `w${i}`).join(' ');
  const drip = `[[fake:drip=${DRIP_MS};text=${words}]]`;
  assert.ok(24 * DRIP_MS > 2 * REQUEST_TIMEOUT_MS, 'the streams last well beyond the request timeout');
  await allAtOnce(t, [
    [
      'a stream longer than the request timeout is delivered whole (anthropic)',
      async () => {
        const stream = stack.anthropic.messages.stream({
          model: 'anthropic:claude-haiku-4-5',
          max_tokens: 256,
          messages: [{ role: 'user', content: drip }],
        });
        const message = await stream.finalMessage();
        assert.equal(message.stop_reason, 'end_turn');
        assert.deepEqual(
          message.content.map((b) => (b.type === 'text' ? b.text : '')),
          [words],
        );
      },
    ],
    [
      'a stream longer than the request timeout is delivered whole (openai)',
      async () => {
        const stream = await stack.openai.chat.completions.create({
          model: 'openai:gpt-5-mini',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: drip }],
        });
        let text = '';
        let finish: string | null = null;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta?.content ?? '';
          finish = chunk.choices[0]?.finish_reason ?? finish;
        }
        assert.equal(text, words);
        assert.equal(finish, 'stop');
      },
    ],
    [
      'a client that takes nothing of a long stream is cut off, and its call is closed once as cancelled',
      async () => {
        const client = await stalledClient(gw.port, head, true);
        // the line of a stream is written when its connection closes: the gateway closed it
        const line = await requestLogLine(gw, client.id);
        assert.equal(line.status, 200, JSON.stringify(line));
        assert.ok(
          gw
            .output()
            .stderr.includes(
              `"msg":"streaming client took nothing in time; cut off","request_id":"${client.id}"`,
            ),
          gw.output().stderr,
        );
        const received = await client.rest();
        // what the sockets' buffers held when it stopped reading, never the whole answer
        assert.ok(received.length < LONG_ANSWER_BYTES, `a part of the answer only: ${received.length} chars`);
        assert.doesNotMatch(received, /message_stop/);
        // the call's closing event: one, committed with the turn
        let closing: ReturnType<typeof readEvents> = [];
        for (const deadline = Date.now() + 5_000; closing.length === 0 && Date.now() < deadline; ) {
          closing = [
            ...readEvents(stack.files.db, 'llm.call_completed'),
            ...readEvents(stack.files.db, 'llm.call_failed'),
          ].filter((e) => e.turn_id === client.id);
          if (closing.length === 0) await sleep(50);
        }
        assert.equal(closing.length, 1, JSON.stringify(closing));
        assert.equal(closing[0].type, 'llm.call_completed');
        assert.equal(closing[0].payload.stop_reason, 'cancelled');
        assert.equal(closing[0].payload.error_class, 'cancelled');
      },
    ],
    [
      'a client that takes nothing of a long answer is cut off, so the answer is not held for ever',
      async () => {
        const client = await stalledClient(gw.port, head, false);
        await stderrIncludes(
          gw,
          `"msg":"client took nothing of its answer in time; cut off","request_id":"${client.id}"`,
        );
        const received = await client.rest();
        // what the sockets' buffers held when it stopped reading, never the whole answer
        assert.ok(received.length < LONG_ANSWER_BYTES, `a part of the answer only: ${received.length} chars`);
        // the call itself was answered and recorded before the client stalled
        assert.equal((await requestLogLine(gw, client.id)).status, 200);
      },
    ],
    [
      'an answer whose headers come after the request timeout is delivered',
      async () => {
        const message = await stack.anthropic.messages.create({
          model: 'anthropic:claude-haiku-4-5',
          max_tokens: 16,
          messages: [
            { role: 'user', content: `[[fake:slow-headers=${2 * REQUEST_TIMEOUT_MS};text=late but whole]]` },
          ],
        });
        assert.deepEqual(
          message.content.map((b) => (b.type === 'text' ? b.text : '')),
          ['late but whole'],
        );
      },
    ],
  ]);
});

test('the gateway refuses to start with a header timeout longer than the request timeout or not a number', async (t) => {
  const tmp = makeTempDir('svc-gw-timeouts-');
  t.after(() => tmp.cleanup());
  const files = gatewayFiles(tmp.dir);
  await issueKey(files.env);
  const refusals = [
    [
      { SVC_GATEWAY_HEADERS_TIMEOUT_MS: '5000', SVC_GATEWAY_REQUEST_TIMEOUT_MS: '4000' },
      /SVC_GATEWAY_HEADERS_TIMEOUT_MS \(5000\) must not exceed SVC_GATEWAY_REQUEST_TIMEOUT_MS \(4000\)/,
    ],
    [{ SVC_GATEWAY_REQUEST_TIMEOUT_MS: '1m' }, /SVC_GATEWAY_REQUEST_TIMEOUT_MS must be a whole number/],
    [{ SVC_GATEWAY_HEADERS_TIMEOUT_MS: '0' }, /SVC_GATEWAY_HEADERS_TIMEOUT_MS must be a whole number/],
  ] as const;
  // each start is refused before it binds: they may run at once
  const results = await Promise.all(
    refusals.map(async ([env]) =>
      runSvc(['gateway', '--port', String(await freePort())], { env: { ...files.env, ...env } }),
    ),
  );
  refusals.forEach(([, says], i) => {
    assert.equal(results[i].code, 1, results[i].stderr);
    assert.match(results[i].stderr, says);
  });
});
