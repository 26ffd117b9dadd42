/**
 * `svc chat` through the real executable with piped stdin, against the real `svc serve` and the fake
 * provider: a scripted turn with a tool call and a confirmation answered "y", Ctrl-C cancelling the running
 * turn (and a second Ctrl-C quitting), resuming a session with --session, and reconnecting with `since`
 * after its socket was cut (an answer streamed while it was away read back from the stored messages).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createServer as createTlsServer } from 'node:tls';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { TEST_TLS_CERT, TEST_TLS_KEY } from '../fixtures/postgres-tls.ts';
import { startAgentServer } from '../helpers/agent-server.ts';
import { type Chat, sessionOf, startChat } from '../helpers/chat-cli.ts';
import { SVC_BIN } from '../helpers/svc.ts';
import { startUpgradeRefusingRelay } from '../helpers/upgrade-refusing-relay.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const server = await startAgentServer({ after }, { env: fakeProviderEnv(fake, ['anthropic']) });

function chat(args: string[], input?: string, url = server.url): Chat {
  return startChat(url, server.env, args, input);
}

test('piped stdin: a turn streams its text, shows the tool calls, asks to confirm, takes "y" and prints the cost', async () => {
  writeFileSync(join(server.workspace, 'app.txt'), 'version=1\n');
  fake.script([
    { text: 'Reading the file.', toolUses: [{ name: 'read_file', input: { path: 'app.txt' } }] },
    { toolUses: [{ name: 'write_file', input: { path: 'out.txt', content: 'written by the agent\n' } }] },
    { text: 'All done.' },
  ]);
  const c = chat(['--workspace', server.workspace], 'please write out.txt\ny\n');
  assert.equal(await c.exit, 0, c.err());
  const out = c.out();
  assert.match(out, /^session sess_[0-9A-Z]{26} · .*workspace · anthropic:/m);
  assert.match(out, /^› please write out\.txt$/m);
  assert.match(out, /^Reading the file\.$/m);
  assert.match(out, /^⚙ read_file path=app\.txt$/m);
  assert.match(out, /^ {2}✓ read_file \(10 B, \d+ ms\)$/m);
  assert.match(out, /^⚙ write_file path=out\.txt content="written by the agent"$/m);
  assert.match(out, /^\? allow write_file path=out\.txt content="written by the agent" \[y\/n\/a\] y$/m);
  assert.match(out, /^All done\.$/m);
  assert.match(out, /^— done · \$\d+\.\d+ · 3 steps$/m);
  assert.equal(readFileSync(join(server.workspace, 'out.txt'), 'utf8'), 'written by the agent\n');
  const session = (await server.api('GET', `/sessions/${sessionOf(out)}`)).body;
  assert.equal(session.turn_count, 1);
  assert.equal(session.workspace_path, server.workspace);
});

test('a confirmation shows the whole command, and no control character from the model reaches the terminal', async () => {
  // the end of a long command is what a 60-character cut would hide
  const command = `echo ${'harmless '.repeat(10)}; touch surprise`;
  fake.script([
    {
      text: 'Look\u001b]0;title\u0007 here\u001b[2K\r.',
      toolUses: [{ name: 'run_command', input: { command: `${command}\u001b[8m` } }],
    },
    { text: 'Not run.' },
  ]);
  const c = chat(['--workspace', server.workspace], 'run it\nn\n');
  assert.equal(await c.exit, 0, c.err());
  const out = c.out();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters that must not be printed
  assert.equal(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(out), false, JSON.stringify(out));
  assert.match(out, /^Look␛\]0;title␇ here␛\[2K␍\.$/m);
  const question = `? allow run_command command=${JSON.stringify(command).slice(0, -1)}\\u001b[8m" [y/n/a] n`;
  assert.ok(out.includes(question), out);
  assert.match(out, /^ {2}✗ run_command: denied_by_user/m);
});

test('Ctrl-C cancels the running turn and the chat goes on; a second Ctrl-C after it quits with 130', async () => {
  const slow = () => ({ text: Array.from({ length: 300 }, (_, i) => `w${i}`).join(' '), dripMs: 20 });
  fake.script([slow()]);
  const c = chat(['--workspace', server.workspace]);
  c.child.stdin!.write('talk for a while\n');
  await c.waitFor(/w3 /);
  c.child.kill('SIGINT');
  await c.waitFor(/^— cancelled \(cancelled from svc chat\)/m);
  assert.match(c.out(), /\^C cancelling the turn/);
  c.child.stdin!.end();
  assert.equal(await c.exit, 0, c.err());
  const sid = sessionOf(c.out());
  const events = (await server.api('GET', `/sessions/${sid}/events?types=turn.cancelled`)).body.events;
  assert.equal(events.length, 1);
  assert.equal(events[0].payload.reason, 'cancelled from svc chat');

  fake.script([slow()]);
  const twice = chat(['--workspace', server.workspace]);
  twice.child.stdin!.write('talk again\n');
  await twice.waitFor(/w3 /);
  twice.child.kill('SIGINT');
  await twice.waitFor(/\^C cancelling/);
  twice.child.kill('SIGINT');
  assert.equal(await twice.exit, 130);

  // "Ctrl-C again" after the cancel has already ended the turn still quits with 130
  fake.script([slow()]);
  const late = chat(['--workspace', server.workspace]);
  late.child.stdin!.write('and once more\n');
  await late.waitFor(/w3 /);
  late.child.kill('SIGINT');
  await late.waitFor(/^— cancelled \(cancelled from svc chat\)/m);
  late.child.kill('SIGINT');
  assert.equal(await late.exit, 130);
});

test('piped stdin: the confirmation question is printed before its answer is read, so a program can wait for it', async () => {
  fake.script([
    { toolUses: [{ name: 'write_file', input: { path: 'asked.txt', content: 'x' } }] },
    { text: 'Ok.' },
  ]);
  const c = chat(['--workspace', server.workspace]);
  c.child.stdin!.write('write asked.txt\n');
  await c.waitFor(/^\? allow write_file path=asked\.txt content=x \[y\/n\/a\] $/m);
  c.child.stdin!.end('n\n');
  assert.equal(await c.exit, 0, c.err());
  assert.match(c.out(), /^\? allow write_file path=asked\.txt content=x \[y\/n\/a\] n$/m);
});

test('a confirmation of a turn another client started is asked at the prompt; answered here or elsewhere, the prompt then takes lines again', {
  timeout: 60_000,
}, async () => {
  const write = (path: string) => ({ toolUses: [{ name: 'write_file', input: { path, content: path } }] });
  fake.script([
    { text: 'first' },
    write('a.txt'),
    { text: 'wrote a' },
    write('b.txt'),
    { text: 'wrote b' },
    { text: 'third' },
  ]);
  const c = chat(['--workspace', server.workspace]);
  c.child.stdin!.write('one\n');
  await c.waitFor(/^first\n— done/m); // the chat's stream is live
  const sid = sessionOf(c.out());
  const elsewhere = async () => {
    const res = await server.api('POST', `/sessions/${sid}/turns`, {
      content: [{ type: 'text', text: 'from another client' }],
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body.turn_id as string;
  };
  // answered here: the line after the question is its answer
  await elsewhere();
  await c.waitFor(/^\? allow write_file path=a\.txt content=a\.txt \[y\/n\/a\] $/m);
  c.child.stdin!.write('y\n');
  await c.waitFor(/^wrote a\n— done/m);
  // answered elsewhere: the question is withdrawn, no line is taken for it
  const turn = await elsewhere();
  await c.waitFor(/^\? allow write_file path=b\.txt content=b\.txt \[y\/n\/a\] $/m);
  const asked = await server.api(
    'GET',
    `/sessions/${sid}/events?turn_id=${turn}&types=tool.confirmation_requested`,
  );
  const requestId = asked.body.events[0].payload.request_id;
  const answer = await server.api('POST', `/sessions/${sid}/turns/${turn}/confirmations/${requestId}`, {
    decision: 'allow',
  });
  assert.equal(answer.status, 200);
  await c.waitFor(/^wrote b\n— done/m);
  assert.match(c.out(), /\[y\/n\/a\] \(answered elsewhere: allow\)$/m);
  // the prompt still takes lines: this one is a turn of its own
  c.child.stdin!.end('three\n');
  assert.equal(await c.exit, 0, c.err());
  assert.match(c.out(), /^› three\n(.*\n)*third\n— done/m);
  assert.equal((await server.api('GET', `/sessions/${sid}`)).body.turn_count, 4);
});

test('Ctrl-C right after a line was sent, before the turn id is known, cancels that turn', async () => {
  fake.script([{ text: Array.from({ length: 300 }, (_, i) => `w${i}`).join(' '), dripMs: 20 }]);
  const c = chat(['--workspace', server.workspace]);
  await c.waitFor(/^session sess_/m);
  await new Promise((r) => setTimeout(r, 300)); // the stream is attached
  c.child.stdin!.write('talk\n');
  await c.waitFor(/^› talk$/m);
  c.child.kill('SIGINT');
  await c.waitFor(/^— cancelled \(cancelled from svc chat\)/m);
  c.child.stdin!.end();
  assert.equal(await c.exit, 0, c.err());
  const sid = sessionOf(c.out());
  const events = (await server.api('GET', `/sessions/${sid}/events?types=turn.cancelled`)).body.events;
  assert.equal(events.length, 1);
});

test('--session resumes a session: its history counts on, and --model sets its model', async () => {
  fake.script([{ text: 'first answer' }, { text: 'second answer' }]);
  const first = chat(['--workspace', server.workspace], 'one\n');
  assert.equal(await first.exit, 0, first.err());
  const sid = sessionOf(first.out());
  const again = chat(['--session', sid, '--model', 'fast'], 'two\n');
  assert.equal(await again.exit, 0, again.err());
  const out = again.out();
  assert.match(out, new RegExp(`^session ${sid} · .* · anthropic:claude-haiku-4-5$`, 'm'));
  assert.match(out, /^resumed · 1 turn so far · \$/m);
  assert.match(out, /^second answer$/m);
  const session = (await server.api('GET', `/sessions/${sid}`)).body;
  assert.equal(session.turn_count, 2);
  const messages = (await server.api('GET', `/sessions/${sid}/messages`)).body.messages;
  assert.deepEqual(
    messages.filter((m: { role: string }) => m.role === 'user').map((m: any) => m.content[0].text),
    ['one', 'two'],
  );
});

test('a cut socket is reconnected with since: the turn goes on and no event is shown twice', async () => {
  // a TCP relay in front of the server whose connections the test can cut
  const open = new Set<Socket>();
  const relay = createServer((client) => {
    const upstream = connect(server.svc.port, '127.0.0.1');
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
  after(() => relay.close());
  const port = (relay.address() as { port: number }).port;
  writeFileSync(join(server.workspace, 'app.txt'), 'version=1\n');
  const words = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
  // the socket is cut early in a 100-word message, so the reconnect comes back before its end
  fake.script([
    { text: words('a', 100), toolUses: [{ name: 'read_file', input: { path: 'app.txt' } }], dripMs: 15 },
    { text: words('b', 20), dripMs: 15 },
  ]);
  const c = chat(['--workspace', server.workspace], undefined, `http://127.0.0.1:${port}`);
  c.child.stdin!.write('go\n');
  await c.waitFor(/a5 /);
  for (const s of open) s.destroy();
  await c.waitFor(/^— done/m);
  c.child.stdin!.end();
  assert.equal(await c.exit, 0, c.err());
  const out = c.out();
  assert.match(out, /· connection lost \(code 1006\); reconnecting/);
  assert.match(out, /· reconnected/);
  assert.equal(out.match(/⚙ read_file/g)?.length, 1);
  assert.equal(out.match(/✓ read_file/g)?.length, 1);
  assert.match(out, /b19\s*\n— done/);
  // the message cut in the middle is printed again in full from its final_content
  assert.ok(
    out.includes(`part of this message was missed while reconnecting; in full:\n${words('a', 100)}\n`),
    out,
  );
});

test('a line typed while the stream reconnects waits for it: the answer streams on the new socket, not to nobody', {
  timeout: 60_000,
}, async () => {
  // a relay that can refuse WebSocket upgrades while REST goes through (a restarted server answers REST
  // before the chat's next reconnect attempt), and that sees each turn submission go by
  const relay = await startUpgradeRefusingRelay(server.svc.port, { after });
  fake.script([{ text: 'before the cut' }, { text: 'streamed after the reconnect' }]);
  const c = chat(['--workspace', server.workspace], undefined, relay.url);
  c.child.stdin!.write('one\n');
  await c.waitFor(/^before the cut\n— done/m);
  relay.refuseUpgrades = true;
  relay.cut();
  await c.waitFor(/connection lost/);
  const before = relay.submissions;
  c.child.stdin!.write('two\n');
  await c.waitFor(/^› two$/m);
  // the old chat sent the turn at once; this one waits while its reconnects are refused
  const refusedBefore = relay.refused;
  for (let i = 0; i < 800 && relay.submissions === before && relay.refused < refusedBefore + 2; i++)
    await new Promise((r) => setTimeout(r, 25));
  relay.refuseUpgrades = false;
  await c.waitFor(/— done[\s\S]*— done/);
  c.child.stdin!.end();
  assert.equal(await c.exit, 0, c.err());
  const out = c.out();
  assert.match(out, /^streamed after the reconnect\n— done/m);
  assert.match(out, /^· waiting for the stream to reconnect$/m);
  assert.ok(out.indexOf('· reconnected') < out.indexOf('streamed after the reconnect'), out);
});

/** Waits until the session's running turn (one another client started, or the chat's own) has ended. */
async function turnEnded(sid: string): Promise<void> {
  for (let i = 0; i < 800; i++) {
    if ((await server.api('GET', `/sessions/${sid}`)).body.current_turn_id === null) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('an answer streamed while the socket was away is read back after the reconnect: in order, once', {
  timeout: 60_000,
}, async () => {
  const relay = await startUpgradeRefusingRelay(server.svc.port, { after });
  writeFileSync(join(server.workspace, 'app.txt'), 'version=1\n');
  fake.script([
    { text: 'first answer' },
    { text: 'Reading the file.', toolUses: [{ name: 'read_file', input: { path: 'app.txt' } }] },
    { text: 'The file says version=1.' },
  ]);
  const c = chat(['--workspace', server.workspace], undefined, relay.url);
  c.child.stdin!.write('one\n');
  await c.waitFor(/^first answer\n— done/m);
  relay.refuseUpgrades = true;
  relay.cut();
  await c.waitFor(/connection lost/);
  // the whole turn (deltas, message.complete, tool events, its end) goes by while the socket is away
  const sid = sessionOf(c.out());
  const turn = await server.api('POST', `/sessions/${sid}/turns`, {
    content: [{ type: 'text', text: 'what does app.txt say?' }],
  });
  assert.equal(turn.status, 202);
  await turnEnded(sid);
  relay.refuseUpgrades = false;
  await c.waitFor(/— done[\s\S]*— done/);
  c.child.stdin!.end();
  assert.equal(await c.exit, 0, c.err());
  const out = c.out();
  const resumed = out.slice(out.indexOf('· reconnected'));
  assert.match(
    resumed,
    /^Reading the file\.\n⚙ read_file path=app\.txt\n {2}✓ read_file \(10 B, \d+ ms\)\nThe file says version=1\.\n— done · /m,
  );
  // the answer shown before the drop is in the store too: it is not printed again
  assert.equal(out.match(/first answer/g)?.length, 1, out);
  assert.equal(out.match(/Reading the file\./g)?.length, 1, out);
  assert.equal(out.match(/The file says version=1\./g)?.length, 1, out);
});

test('a message cut by the drop whose end was sent while the socket was away is printed in full after it', {
  timeout: 60_000,
}, async () => {
  const relay = await startUpgradeRefusingRelay(server.svc.port, { after });
  const words = Array.from({ length: 100 }, (_, i) => `c${i}`).join(' ');
  fake.script([{ text: words, dripMs: 15 }]);
  const c = chat(['--workspace', server.workspace], undefined, relay.url);
  c.child.stdin!.write('go\n');
  await c.waitFor(/c5 /);
  relay.refuseUpgrades = true;
  relay.cut();
  await c.waitFor(/connection lost/);
  await turnEnded(sessionOf(c.out()));
  relay.refuseUpgrades = false;
  await c.waitFor(/^— done/m);
  c.child.stdin!.end();
  assert.equal(await c.exit, 0, c.err());
  const out = c.out();
  assert.ok(
    out.includes(`part of this message was missed while reconnecting; in full:\n${words}\n— done`),
    out,
  );
  assert.equal(out.split(words).length, 2, out);
});

test('svc chat attached to a session mid-message prints it in full after, saying its start streamed before the attach', {
  timeout: 60_000,
}, async () => {
  const words = Array.from({ length: 20 }, (_, i) => `d${i}`).join(' ');
  fake.script([{ text: words, holdAfter: 5 }]);
  const a = chat(['--workspace', server.workspace]);
  a.child.stdin!.write('go\n');
  await a.waitFor(/d0/);
  // the rest of the answer waits until the second chat is subscribed
  const b = chat(['--session', sessionOf(a.out())]);
  await b.waitFor(/^resumed · /m);
  fake.release();
  await b.waitFor(/^— done/m);
  b.child.stdin!.end();
  a.child.stdin!.end();
  assert.equal(await b.exit, 0, b.err());
  assert.equal(await a.exit, 0, a.err());
  const out = b.out();
  // before: 'part of this message was missed while reconnecting', with no reconnect at all
  assert.ok(
    out.includes(`part of this message streamed before svc chat attached; in full:\n${words}\n— done`),
    out,
  );
  assert.doesNotMatch(out, /reconnect/);
});

test('an unknown session or an unreachable server is one sentence on stderr and exit 1', async () => {
  const unknown = chat(['--session', 'sess_01ARZ3NDEKTSV4RRFFQ69G5FAV'], '');
  assert.equal(await unknown.exit, 1);
  // before: 'svc: No session sess_…. (session_not_found)': which server, and what now?
  assert.equal(
    unknown.err(),
    `svc: --session sess_01ARZ3NDEKTSV4RRFFQ69G5FAV is no session of the agent server at ${server.url}; start a new one with \`svc chat\` (without --session), or pass an id its GET /sessions lists. (session_not_found)\n`,
  );
  const child = spawn(process.execPath, [SVC_BIN, 'chat', '--server', 'http://127.0.0.1:9'], {
    env: server.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d) => {
    err += d;
  });
  child.stdin.end('hi\n');
  assert.equal(await new Promise((r) => child.on('exit', r)), 1);
  assert.match(err, /Cannot reach the agent server at http:\/\/127\.0\.0\.1:9/);
  // a --server that is not a URL at all is a usage error: exit 2
  const bad = spawn(process.execPath, [SVC_BIN, 'chat', '--server', 'notaurl'], {
    env: server.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let badErr = '';
  bad.stderr.setEncoding('utf8').on('data', (d) => {
    badErr += d;
  });
  bad.stdin.end('hi\n');
  assert.equal(await new Promise((r) => bad.on('exit', r)), 2);
  assert.match(badErr, /^svc: --server must be the agent server's http:\/\/ URL/);
  // a user name or password in --server is a usage error too (svc chat sends no credentials), and no
  // sentence shows the password: before, 'Cannot reach the agent server at http://admin:s3cret@…' (exit 1)
  for (const [url, pattern] of [
    [server.url.replace('//', '//admin:s3cret@'), /^svc: --server must not carry a user name or password/],
    ['ftp://admin:s3cret@127.0.0.1:9/', /^svc: --server must be the agent server's http:\/\/ URL/],
  ] as const) {
    const withPassword = spawn(process.execPath, [SVC_BIN, 'chat', '--server', url], {
      env: server.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let pwErr = '';
    withPassword.stderr.setEncoding('utf8').on('data', (d) => {
      pwErr += d;
    });
    withPassword.stdin.end('hi\n');
    assert.equal(await new Promise((r) => withPassword.on('exit', r)), 2, pwErr);
    assert.match(pwErr, pattern);
    assert.ok(!pwErr.includes('s3cret') && pwErr.includes('***@127.0.0.1'), pwErr);
  }
});

test('an https:// --server (a TLS proxy in front of svc serve) streams the answer over wss:// through it', async () => {
  // a TLS terminator passing the bytes on to svc serve: the server names the socket ws://<the Host asked>,
  // which svc chat must reach as wss:// through the proxy (before: plain ws:// to the TLS port, reconnecting)
  const proxy = createTlsServer({ cert: TEST_TLS_CERT, key: TEST_TLS_KEY }, (tls) => {
    const plain = connect(Number(new URL(server.url).port), '127.0.0.1');
    tls.pipe(plain).pipe(tls);
    tls.on('error', () => plain.destroy());
    plain.on('error', () => tls.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  after(() => proxy.close());
  const ca = join(server.home, 'proxy-ca.pem');
  writeFileSync(ca, TEST_TLS_CERT);
  const c = startChat(
    `https://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    { ...server.env, NODE_EXTRA_CA_CERTS: ca },
    ['--workspace', server.workspace],
    'hello over tls\n',
  );
  assert.equal(await c.exit, 0, c.err());
  assert.match(c.out(), /^Hello from the fake provider\.\n— done/m);
  assert.doesNotMatch(c.out(), /connection lost/);
});

test('a stream that cannot be opened at start (a proxy that drops WebSocket upgrades) is one sentence, exit 1', async () => {
  // REST goes through, the upgrade is cut: before, "connection lost (code 1006); reconnecting" for a minute
  const relay = await startUpgradeRefusingRelay(server.svc.port, { after });
  relay.refuseUpgrades = true;
  const c = chat(['--workspace', server.workspace], 'hi\n', relay.url);
  assert.equal(await c.exit, 1);
  assert.match(
    c.err(),
    /^svc: The session's stream ws:\/\/127\.0\.0\.1:\d+\/sessions\/sess_[0-9A-Z]{26}\/stream could not be opened \(code 1006\); check that `svc serve` is running there and that a proxy in front of it passes WebSocket upgrades\.\n$/,
  );
  assert.equal(relay.refused, 1);
  assert.equal(relay.submissions, 0);
});

test('a session ended on the server while the chat follows it ends the chat with one sentence saying what to do', async () => {
  const c = chat(['--workspace', server.workspace]);
  await c.waitFor(/^session sess_/m);
  const sid = sessionOf(c.out());
  assert.equal((await server.api('DELETE', `/sessions/${sid}`)).status, 200);
  assert.equal(await c.exit, 1);
  // before: 'svc: The session was ended on the server.' (which one, and what now?)
  assert.equal(
    c.err(),
    `svc: Session ${sid} was ended on the server (DELETE /sessions/${sid}); start a new one with \`svc chat\` (without --session).\n`,
  );
});

test('an unknown --model or a --workspace that is no folder is one sentence naming the flag, not the REST field', async () => {
  const c = chat(['--model', 'nope'], '');
  assert.equal(await c.exit, 1);
  assert.match(
    c.err(),
    /^svc: --model "nope" is not a model id, alias or tier in .*; svc serve's GET \/models lists them\. \(model_not_configured\)\n$/,
  );
  const missing = join(server.workspace, 'no-such-folder');
  const w = chat(['--workspace', missing], '');
  assert.equal(await w.exit, 1);
  assert.equal(
    w.err(),
    `svc: --workspace ${missing} is not an existing directory; pass the folder to work in (the default is the current directory). (workspace_not_found)\n`,
  );
});

test('--session of an ended session is refused at start with one sentence (exit 1), not at the first prompt', async () => {
  const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
  assert.equal((await server.api('DELETE', `/sessions/${sid}`)).status, 200);
  const ended = chat(['--session', sid], 'hello\n');
  assert.equal(await ended.exit, 1);
  assert.equal(ended.out(), '');
  assert.match(
    ended.err(),
    new RegExp(
      `^svc: Session ${sid} ended at [0-9T:.Z-]+; start a new one \\(svc chat without --session\\)\\.\\n$`,
    ),
  );
});

test('output closed mid-turn (| head -1): the turn is cancelled and one sentence on stderr, exit 1, no stack', async () => {
  fake.script([{ text: Array.from({ length: 200 }, (_, i) => `h${i}`).join(' '), dripMs: 20 }]);
  const c = chat(['--workspace', server.workspace], 'talk\n');
  await c.waitFor(/h3 /);
  c.child.stdout!.destroy(); // like `| head -1`: the reader is gone
  assert.equal(await c.exit, 1);
  assert.match(c.err(), /^svc: Standard output closed \(write EPIPE\); the running turn was cancelled\.\n$/);
  const sid = sessionOf(c.out());
  for (let i = 0; i < 400; i++) {
    if ((await server.api('GET', `/sessions/${sid}`)).body.current_turn_id === null) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const ended = (await server.api('GET', `/sessions/${sid}/events?types=turn.cancelled`)).body.events;
  assert.equal(ended.length, 1);
  assert.equal(ended[0].payload.reason, 'output closed (svc chat)');
});

test('an empty --model, --session, --workspace or --server, or an SVC_SERVE_PORT that is no port, is one sentence, not a chat on the defaults', async () => {
  const run = async (args: string[], env: NodeJS.ProcessEnv = server.env) => {
    const child = spawn(process.execPath, [SVC_BIN, 'chat', ...args], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d) => {
      err += d;
    });
    child.stdin.end('hi\n');
    const code = await new Promise((r) => child.on('exit', r));
    return { code, out, err };
  };
  for (const flag of ['--model', '--session', '--workspace', '--server']) {
    const r = await run([...(flag === '--server' ? [] : ['--server', server.url]), flag, '']);
    assert.deepEqual([r.code, r.out], [2, ''], `${flag} '': ${r.err}`);
    assert.equal(r.err, `svc: Option ${flag} of svc chat needs a value.\n`);
  }
  // --session resumes a session on its own folder: a --workspace beside it is refused, not ignored
  const both = await run(['--server', server.url, '--session', 'sess_x', '--workspace', server.workspace]);
  assert.deepEqual([both.code, both.out], [2, ''], both.err);
  assert.equal(
    both.err,
    'svc: --workspace and --session cannot be used together: --session resumes a session on the folder it was created on; pass one of them.\n',
  );
  const port = await run([], { ...server.env, SVC_SERVE_PORT: 'abc' });
  assert.deepEqual([port.code, port.out], [1, ''], port.err);
  assert.match(port.err, /^svc: SVC_SERVE_PORT must be a port number from 0 to 65535, not "abc"; [^\n]+\n$/);
});

test('a line the server refuses (503 routing_failed) shows its reason and its end before the next prompt', async () => {
  fake.script([{ text: 'the small one' }]);
  const huge = 'log line '.repeat(300_000); // too large for every model: context_too_small
  const c = chat(['--workspace', server.workspace], `${huge}\nnext\n`);
  assert.equal(await c.exit, 1, c.err());
  const out = c.out().replace(huge, '<huge>');
  assert.match(
    out,
    /\n› <huge>\n! [^\n]+ \(routing_failed\)\n— failed: routing_failed · \$0\.000000\n› next\n(· [^\n]+\n)?the small one\n— done/,
  );
});
