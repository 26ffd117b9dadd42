/**
 * What `svc chat` prints for tool calls, delegation and the turn's end: one line each, counts in the
 * singular when there is one, no trailing space after a tool called without input.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRenderer, type Printer } from '#src/cli/chat/render.ts';
import type { EventEnvelope } from '#src/events/envelope.ts';

function render(events: Array<{ type: string; payload: Record<string, unknown> }>): string[] {
  const lines: string[] = [];
  const p: Printer = { text: (s) => lines.push(s), line: (s) => lines.push(s), endLine() {} };
  const r = createRenderer(p);
  for (const e of events) r({ ...e } as unknown as EventEnvelope);
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
