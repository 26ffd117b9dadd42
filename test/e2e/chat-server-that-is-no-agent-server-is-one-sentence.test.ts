/**
 * `svc chat --server <url>` where an HTTP server answers that is not the agent server (a web app, a
 * `python -m http.server`, an API of another kind): one sentence on stderr naming the URL and what to check,
 * exit 1 (DECISIONS §2), never ofetch's `[POST] "…": 501 …` text or a body.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { after, test } from 'node:test';
import { isolatedEnv, makeTempDir, runSvc } from '../helpers/svc.ts';

type Answer = (method: string, path: string, res: ServerResponse) => void;
let answer: Answer = () => {};
const http = createServer((req, res) => {
  req.resume();
  req.on('end', () => answer(req.method ?? 'GET', req.url ?? '/', res));
});
await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
after(() => http.close());
const url = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
const home = makeTempDir();
after(home.cleanup);
const workspace = makeTempDir();
after(workspace.cleanup);

const html = '<!DOCTYPE html>\n<html><body><h1>Error response</h1><p>Nothing here.</p></body></html>\n';
const send = (status: number, type: string, body: string, statusText?: string) => (res: ServerResponse) => {
  res.writeHead(status, statusText ?? '', { 'content-type': type });
  res.end(body);
};

const sentence = (request: string, status: number) =>
  `svc: ${url} does not answer as an svc agent server (${request}: HTTP ${status}, not the agent server's answer); check that \`svc serve\` is running there, or pass its URL with --server.\n`;

async function chatAgainst(a: Answer): Promise<{ code: number | null; stdout: string; stderr: string }> {
  answer = a;
  return runSvc(['chat', '--server', url, '--workspace', workspace.dir], {
    env: isolatedEnv(home.dir),
    input: 'hello\n',
  });
}

const cases: Array<{ name: string; answer: Answer; request: string; status: number }> = [
  {
    name: 'a 501 "Unsupported method" page (python -m http.server)',
    answer: (_m, _p, res) => send(501, 'text/html', html, "Unsupported method ('POST')")(res),
    request: 'POST /sessions',
    status: 501,
  },
  {
    name: 'a 404 HTML page',
    answer: (_m, _p, res) => send(404, 'text/html', html, 'Not Found')(res),
    request: 'POST /sessions',
    status: 404,
  },
  {
    name: 'a JSON 404 of another API ({"detail": …})',
    answer: (_m, _p, res) => send(404, 'application/json', '{"detail":"Not Found"}')(res),
    request: 'POST /sessions',
    status: 404,
  },
  {
    name: 'a 500 whose JSON body is no JSON',
    answer: (_m, _p, res) => send(500, 'application/json', 'upstream exploded {')(res),
    request: 'POST /sessions',
    status: 500,
  },
  {
    name: 'a web app answering 200 with HTML to everything',
    answer: (_m, _p, res) => send(200, 'text/html', html)(res),
    request: 'POST /sessions',
    status: 200,
  },
  {
    name: 'a 200 whose JSON body is no JSON',
    answer: (_m, _p, res) => send(200, 'application/json', 'not json')(res),
    request: 'POST /sessions',
    status: 200,
  },
  {
    name: 'a server that takes POST /sessions and then has no such session page (HTML 404)',
    answer: (m, p, res) =>
      m === 'POST' && p === '/sessions'
        ? send(201, 'application/json', '{"id":"sess_01ARZ3NDEKTSV4RRFFQ69G5FAV"}')(res)
        : send(404, 'text/html', html, 'Not Found')(res),
    request: 'GET /sessions/sess_01ARZ3NDEKTSV4RRFFQ69G5FAV',
    status: 404,
  },
];

for (const c of cases)
  test(`${c.name}: one sentence naming the URL and what to check, exit 1`, async () => {
    const r = await chatAgainst(c.answer);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, sentence(c.request, c.status));
  });

test('an agent-server error body (a code of svc) is still shown as the server said it', async () => {
  const r = await chatAgainst((_m, _p, res) =>
    send(
      400,
      'application/json',
      JSON.stringify({ error: { code: 'internal_error', message: 'The store failed.' } }),
    )(res),
  );
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr, 'svc: The store failed. (internal_error)\n');
});

test('another svc server (svc gateway: 404 not_found in the service error body) is no agent server either', async () => {
  const r = await chatAgainst((m, p, res) =>
    send(
      404,
      'application/json',
      JSON.stringify({ error: { code: 'not_found', message: `No route for ${m} ${p} on the gateway.` } }),
    )(res),
  );
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr, sentence('POST /sessions', 404));
});
