/**
 * A history too long for the routed model is windowed for the model's view: the oldest whole exchanges go
 * first, then the current turn's oldest tool steps; a tool_use never loses its tool_result, the current prompt
 * and the newest step stay, and one note says what was left out. Used to be: nothing was ever left out, so a
 * long session answered every later turn 503 context_too_small.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LEFT_OUT_NOTE, smallestWindow, windowHistory } from '#src/agent/sessions/history-window.ts';
import { CANCELLED_NOTE } from '#src/agent/sessions/messages.ts';
import { historyForModel, prepareHistory, smallestInputTokens } from '#src/agent/turn-request.ts';
import type { CanonicalMessage } from '#src/canonical/message.ts';
import { parseModelRegistry } from '#src/models/registry.ts';
import { fitsContext } from '#src/routing/candidate.ts';
import { describeRequest } from '#src/routing/request-facts.ts';

const prompt = (text: string): CanonicalMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const answer = (text: string): CanonicalMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });
const toolUse = (id: string): CanonicalMessage => ({
  role: 'assistant',
  content: [{ type: 'tool_use', id, name: 'read_file', input: { path: `${id}.txt` } }],
});
const toolResult = (id: string, size = 10): CanonicalMessage => ({
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: id, content: 'x'.repeat(size) }],
});

/** Three finished turns (one with a tool step and one cancelled), then a current turn with three tool steps. */
const HISTORY: CanonicalMessage[] = [
  prompt('first question'),
  toolUse('t1'),
  toolResult('t1'),
  answer('first answer'),
  prompt('second question'),
  prompt(CANCELLED_NOTE),
  prompt('third question'),
  answer('third answer'),
  prompt('current question'),
  toolUse('c1'),
  toolResult('c1'),
  toolUse('c2'),
  toolResult('c2'),
  toolUse('c3'),
  toolResult('c3'),
];

const chars = (view: CanonicalMessage[]) => JSON.stringify(view).length;
const notes = (view: CanonicalMessage[]) => JSON.stringify(view).split(LEFT_OUT_NOTE).length - 1;

test('a history that fits is sent whole, without a note', () => {
  const view = windowHistory(HISTORY, () => true);
  assert.equal(view, HISTORY);
  assert.equal(notes(view), 0);
});

test('the oldest whole exchanges are left out first, with one note before what is kept', () => {
  const fitsWithoutTheFirstExchange = (view: CanonicalMessage[]) =>
    chars(view) <= chars(HISTORY.slice(4)) + 200;
  const view = windowHistory(HISTORY, fitsWithoutTheFirstExchange);
  assert.deepEqual(view.slice(1), HISTORY.slice(4));
  assert.equal(view[0].content[0].type === 'text' && view[0].content[0].text, LEFT_OUT_NOTE);
  assert.equal(notes(view), 1);
});

test('the cancelled note is never where a window starts: it stays with the exchange it closes', () => {
  // room for the third exchange onwards and a little more, not for the second question
  const fits = (view: CanonicalMessage[]) => chars(view) < chars(HISTORY.slice(5)) + 100;
  const view = windowHistory(HISTORY, fits);
  assert.deepEqual(view.slice(1), HISTORY.slice(6));
  assert.equal(JSON.stringify(view).includes(CANCELLED_NOTE), false);
});

test('every window keeps the current prompt and the newest step, and pairs each tool_use with its result', () => {
  const sizes = new Set<number>();
  for (let budget = 0; budget <= chars(HISTORY) + 200; budget += 20) {
    const view = windowHistory(HISTORY, (v) => chars(v) <= budget);
    sizes.add(view.length);
    const sent = JSON.stringify(view);
    assert.equal(sent.includes('current question'), true, `budget ${budget}`);
    assert.deepEqual(view.slice(-2), HISTORY.slice(-2));
    assert.equal(notes(view), view === HISTORY ? 0 : 1, `budget ${budget}`);
    // prepared as the provider gets it, nothing is dropped for lack of its partner
    const uses = (v: CanonicalMessage[]) =>
      v.flatMap((m) => m.content.filter((b) => b.type === 'tool_use' || b.type === 'tool_result')).length;
    assert.equal(uses(prepareHistory(view)), uses(view), `budget ${budget}`);
  }
  assert.ok(sizes.size >= 5, 'the budgets walk through several windows');
});

test('within the current turn its oldest tool steps go, the note once right after the prompt', () => {
  const view = windowHistory(HISTORY, () => false);
  assert.deepEqual(view, [HISTORY[8], prompt(LEFT_OUT_NOTE), ...HISTORY.slice(-2)]);
  assert.deepEqual(smallestWindow(HISTORY), view);
  const oneStepMore = windowHistory(HISTORY, (v) => v.length <= 6);
  assert.deepEqual(oneStepMore, [HISTORY[8], prompt(LEFT_OUT_NOTE), ...HISTORY.slice(-4)]);
  assert.deepEqual(
    prepareHistory(view).map((m) => m.role),
    ['user', 'assistant', 'user'],
  );
});

test('a turn just submitted keeps its prompt alone when nothing older fits', () => {
  const submitted = HISTORY.slice(0, 9);
  assert.deepEqual(smallestWindow(submitted), [prompt(LEFT_OUT_NOTE), prompt('current question')]);
  assert.deepEqual(smallestWindow([prompt('only')]), [prompt('only')]);
});

test('a history windowed for a model fits its context by the routing estimate, max_tokens reserved', () => {
  const registry = parseModelRegistry(
    `pricing_version: t
models:
  - id: anthropic:small
    tier: fast
    capabilities: { supports_images: false, supports_tools: true, max_context_tokens: 3000, max_output_tokens: 1000 }
    prices: { input: 1, output: 1 }
`,
    'test',
  );
  const model = registry.get('anthropic:small')!;
  const parts = { tools: [], system: 'a system prompt', worker: false };
  const long = [
    prompt('a'.repeat(4000)),
    answer('b'.repeat(2000)),
    prompt('c'.repeat(2000)),
    answer('d'),
    prompt('now'),
  ];
  const view = historyForModel(parts, long, model);
  const req = {
    model: '',
    system: [{ type: 'text' as const, text: parts.system }],
    messages: view,
    tools: [],
    stream: true,
    include_usage: true,
  };
  const tokens = describeRequest(req, { workspacePath: null }).estimatedInputTokens;
  assert.equal(fitsContext(tokens, 1000, model.capabilities), true);
  assert.equal(JSON.stringify(view).includes('a'.repeat(4000)), false);
  assert.equal(JSON.stringify(view).includes('c'.repeat(2000)), true);
  assert.equal(notes(view), 1);
  assert.ok(smallestInputTokens(parts, long) < tokens);
});
