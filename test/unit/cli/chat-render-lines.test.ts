/**
 * What `svc chat` prints for tool calls, delegation and the turn's end: one line each, counts in the
 * singular when there is one, no trailing space after a tool called without input.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { compactInput, createPrinter, createRenderer, type Printer } from '#src/cli/chat/render.ts';
import type { EventEnvelope } from '#src/events/envelope.ts';

function render(events: Array<{ type: string; payload: Record<string, unknown> }>): string[] {
  const lines: string[] = [];
  const p: Printer = { text: (s) => lines.push(s), line: (s) => lines.push(s), endLine() {} };
  const r = createRenderer(p);
  for (const e of events) r.event({ ...e } as unknown as EventEnvelope);
  return lines;
}

test('a tool called without input prints its name alone; with input, name then the input', () => {
  assert.deepEqual(
    render([
      { type: 'tool.called', payload: { tool_name: 'list_files', input: {} } },
      { type: 'tool.called', payload: { tool_name: 'read_file', input: { path: 'a.txt' } } },
    ]),
    ['⚙ list_files', '⚙ read_file path=a.txt'],
  );
});

test('a string the event carries cut (input_truncated) is counted at its full length', () => {
  const cut = `${'x'.repeat(65536)}… [cut here: 20000000 characters in all]`;
  assert.deepEqual(
    render([
      {
        type: 'tool.called',
        payload: {
          tool_name: 'write_file',
          input: { path: 'a', content: cut },
          input_truncated: { content: 2e7 },
        },
      },
    ]),
    [`⚙ write_file path=a content="${'x'.repeat(59)}…" (20000000 chars)`],
  );
});

test('one step is "1 step", for the turn and for a worker', () => {
  assert.deepEqual(
    render([
      { type: 'delegate.completed', payload: { cost_usd: '0.01', steps: 1 } },
      { type: 'delegate.completed', payload: { cost_usd: '0.02', steps: 3 } },
      { type: 'turn.completed', payload: { status: 'completed', cost_usd: '0.03', steps: 1 } },
      { type: 'turn.completed', payload: { status: 'completed', cost_usd: '0.04', steps: 2 } },
    ]),
    [
      '↳ worker done ($0.01, 1 step)',
      '↳ worker done ($0.02, 3 steps)',
      '— done · $0.03 · 1 step',
      '— done · $0.04 · 2 steps',
    ],
  );
});

test('a message is printed once: a stored copy after its deltas, or its deltas after a stored copy, add nothing', () => {
  const out: string[] = [];
  const p: Printer = { text: (s) => out.push(s), line: (s) => out.push(`${s}\n`), endLine() {} };
  const r = createRenderer(p);
  const ev = (type: string, payload: Record<string, unknown>) =>
    r.event({ type, payload } as unknown as EventEnvelope);
  const content = (text: string) => [{ type: 'text', text }];
  ev('text.delta', { message_id: 'm1', text: 'seen live' });
  ev('message.complete', { message_id: 'm1', final_content: content('seen live') });
  r.stored({ id: 'm1', content: content('seen live') });
  r.stored({ id: 'm2', content: content('missed') });
  ev('text.delta', { message_id: 'm2', text: 'missed' });
  ev('message.complete', { message_id: 'm2', final_content: content('missed') });
  ev('text.delta', { message_id: 'm3', text: 'half' });
  r.stored({ id: 'm3', content: content('half and the rest') });
  assert.deepEqual(out, [
    'seen live',
    'missed',
    'half',
    '· part of this message was missed while reconnecting; in full:\n',
    'half and the rest',
  ]);
});

test('a message partly missed says whether svc chat attached mid-message or reconnected', () => {
  const out: string[] = [];
  const p: Printer = { text: (s) => out.push(s), line: (s) => out.push(`${s}\n`), endLine() {} };
  const r = createRenderer(p);
  const ev = (type: string, payload: Record<string, unknown>) =>
    r.event({ type, payload } as unknown as EventEnvelope);
  const content = (text: string) => [{ type: 'text', text }];
  // attached while m1 streamed: its start went by before the first subscription, no reconnect at all
  ev('text.delta', { message_id: 'm1', text: ' the end' });
  ev('message.complete', { message_id: 'm1', final_content: content('from the start to the end') });
  // then the socket dropped mid-m2 and subscribed again
  ev('text.delta', { message_id: 'm2', text: 'before' });
  r.reconnected();
  ev('text.delta', { message_id: 'm2', text: ' after' });
  ev('message.complete', { message_id: 'm2', final_content: content('before, between and after') });
  assert.deepEqual(out, [
    ' the end',
    // before: '· part of this message was missed while reconnecting; in full:'
    '· part of this message streamed before svc chat attached; in full:\n',
    'from the start to the end',
    'before',
    ' after',
    '· part of this message was missed while reconnecting; in full:\n',
    'before, between and after',
  ]);
});

test('a confirmation shows the fields it names whole; other long strings are cut with their length', () => {
  const path = `src/${'deep/'.repeat(20)}file.ts`;
  const command = `ls ${'-l '.repeat(30)}&& rm -r build\nrm -r dist`;
  assert.equal(
    compactInput({ command, path, content: 'x'.repeat(100) }, undefined, ['command', 'path']),
    `command=${JSON.stringify(command)} path=${path} content="${'x'.repeat(59)}…" (100 chars)`,
  );
  // a whole field the event carries cut still says how long it is
  assert.equal(
    compactInput({ command: 'abc' }, { command: 70000 }, ['command']),
    'command=abc (70000 chars)',
  );
});

test('control characters never reach the terminal: shown as signs in text, quoted and escaped in inputs', () => {
  const out = new PassThrough();
  let written = '';
  out.on('data', (d) => {
    written += d;
  });
  const p = createPrinter(out);
  p.text('a\u001b[31mred\u001b[0m\r\nnext\rover\u0007\u009b2J\u202eevil\u007f\tok');
  p.line('tool\u001b[2K');
  assert.equal(written, 'a␛[31mred␛[0m\nnext␍over␇\ufffd2J\ufffdevil␡\tok\ntool␛[2K\n');
  assert.equal(compactInput({ path: 'a\u001b[2Kb' }), 'path="a␛[2Kb"'.replace('␛', '\\u001b'));
  assert.equal(compactInput({ path: 'a\u009bb', name: 'x\u202ey' }), 'path="a\ufffdb" name="x\ufffdy"');
});

test('meta lines are dimmed on a terminal, and not when NO_COLOR is set (no-color.org)', () => {
  const lines = (env: Record<string, string | undefined>) => {
    const out = Object.assign(new PassThrough(), { isTTY: true });
    let written = '';
    out.setEncoding('utf8').on('data', (d) => {
      written += d;
    });
    createPrinter(out, env).line('· meta', true);
    return written;
  };
  assert.equal(lines({}), '\u001b[2m· meta\u001b[0m\n');
  assert.equal(lines({ NO_COLOR: '1' }), '· meta\n');
  assert.equal(lines({ NO_COLOR: '' }), '\u001b[2m· meta\u001b[0m\n');
});

test('a CRLF or an emoji split between two text deltas prints as a line break and the emoji, not as signs', () => {
  const out = new PassThrough();
  let written = '';
  out.setEncoding('utf8').on('data', (d) => {
    written += d;
  });
  const p = createPrinter(out);
  // before: 'one␍\ntwo \ufffd\ufffd' (each chunk made safe, and written, on its own)
  for (const chunk of ['one\r', '\ntwo \ud83e', '\udd84 lone\r']) p.text(chunk);
  p.endLine();
  p.text('cut \ud83e');
  p.line('next');
  assert.equal(written, 'one\ntwo 🦄 lone␍\ncut \ufffd\nnext\n');
});

test('a turn that stopped at the step limit or on a cut answer says so instead of done', () => {
  const end = (stop_reason: string) => ({
    type: 'turn.completed',
    payload: { status: 'completed', stop_reason, cost_usd: '0.5', steps: 50 },
  });
  assert.deepEqual(render([end('max_steps'), end('max_tokens'), end('end_turn'), end('stop_sequence')]), [
    '— stopped: max_steps · $0.5 · 50 steps',
    '— stopped: max_tokens · $0.5 · 50 steps',
    '— done · $0.5 · 50 steps',
    '— done · $0.5 · 50 steps',
  ]);
});
