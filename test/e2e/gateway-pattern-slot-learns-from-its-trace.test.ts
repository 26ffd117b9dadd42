/**
 * Slot 4 through the real gateway: the history is made by the gateway itself (requests naming `fast`, so
 * slot 1 sends them to haiku, against the fake provider), the background rebuild learns it, and a request
 * for `auto` of the same kind goes to haiku by slot 4 (route.decided, pattern.matched, the metric), while a
 * kind haiku failed on does not, and a canonical name still wins slot 1. `svc routing explain` reads the
 * same store and says the same.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import type OpenAI from 'openai';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { waitForPatternRebuild } from '../helpers/pattern-rebuilt.ts';
import { createScraper } from '../helpers/prometheus-exposition.ts';
import { runSvc } from '../helpers/svc.ts';

const HAIKU = 'anthropic:claude-haiku-4-5';
const SONNET = 'anthropic:claude-sonnet-4-5';
const WEATHER: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

/** Same length for every i, so every request falls in the same input-size bucket. */
const fixText = (i: number) => `fix the failing test in module ${String(i).padStart(2, '0')}`;

test('slot 4 learns from the gateway trace and routes `auto` to the model that worked', async (t) => {
  const policyDir = mkdtempSync(join(tmpdir(), 'svc-pattern-e2e-'));
  t.after(() => rmSync(policyDir, { recursive: true, force: true }));
  const routing = join(policyDir, 'routing.yaml');
  writeFileSync(routing, 'pattern: { enabled: true }\n');
  const stack = await startGatewayStack({
    env: { SVC_ROUTING_POLICY: routing, SVC_PATTERN_REFRESH_MS: '200', SVC_GATEWAY_MAX_RETRIES: '0' },
  });
  t.after(() => stack.stop());
  const { openai, fake, gw } = stack;
  const ask = (model: string, content: string, tools?: OpenAI.Chat.ChatCompletionTool[]) =>
    openai.chat.completions.create({
      model,
      messages: [{ role: 'user', content }],
      ...(tools ? { tools } : {}),
    });

  // history: haiku failed 20 weather questions (with a tool), then answered 20 "fix the failing test" requests
  fake.script(Array.from({ length: 20 }, () => 'error=500'));
  for (let i = 0; i < 20; i++)
    await assert.rejects(ask('fast', `what is the weather in city ${String(i).padStart(2, '0')}`, [WEATHER]));
  for (let i = 0; i < 20; i++) await ask('fast', fixText(i));
  await waitForPatternRebuild(gw.output, (l) => l.keys === 2 && l.keys_with_a_choice === 1);

  const { movedBy } = createScraper(gw.url);
  let reply: OpenAI.Chat.ChatCompletion | undefined;
  const moved = await movedBy(async () => {
    reply = await ask('auto', fixText(99));
  });
  assert.equal(reply?.model, 'auto', 'the answer echoes the requested name');
  const turn = lastTurn(stack.files.db);
  assert.deepEqual(
    turn.map((e) => e.type),
    ['route.decided', 'pattern.matched', 'llm.call_started', 'llm.call_completed', 'turn.completed'],
  );
  const [route, matched, , completed] = turn;
  const history = readEvents(stack.files.db, 'route.decided')[25].payload.fingerprint as {
    structural: string;
  };
  assert.deepEqual((route.payload.chain as unknown[]).slice(3), [
    { policy: 'pattern', model: HAIKU, verdict: 'accepted' },
  ]);
  assert.equal(route.payload.winner_index, 3);
  assert.equal((route.payload.fingerprint as { structural: string }).structural, history.structural);
  assert.equal(matched.parent_event_id, route.id);
  assert.deepEqual(
    { ...matched.payload, median_cost_usd: typeof matched.payload.median_cost_usd },
    {
      chose_model: HAIKU,
      fingerprint_version: 'structural',
      fingerprint: history.structural,
      samples: 20,
      success_rate: 1,
      median_cost_usd: 'string',
      gateway_key_id: stack.keyId,
    },
  );
  assert.equal(completed.payload.model, HAIKU);
  assert.equal(
    moved.get(`svc_pattern_matches_total{chose_model=${HAIKU},fingerprint_version=structural}`),
    1,
  );
  assert.equal(moved.get(`svc_routing_decisions_total{chosen_model=${HAIKU},winning_slot=pattern}`), 1);

  // a token count of that request is routed like the call (README §Token counting): by slot 4 too, not
  // by the global default it went to when count_tokens routed without the learned table
  const { response: counted } = await stack.anthropic.messages
    .countTokens({ model: 'auto', messages: [{ role: 'user', content: fixText(96) }] })
    .withResponse();
  assert.equal(counted.headers.get('svc-routed-model'), HAIKU);

  // the kind haiku failed on: slot 4 has no model that worked, the global default answers
  await ask('auto', 'what is the weather in city 99', [WEATHER]);
  const weather = lastTurn(stack.files.db)[0].payload;
  assert.equal((weather.chain as Array<{ verdict: string }>)[3].verdict, 'no_match');
  assert.equal(weather.chosen_model, SONNET);

  // a model the client names wins slot 1 and slot 4 is never asked
  await ask('balanced', fixText(98));
  const named = lastTurn(stack.files.db)[0].payload;
  assert.deepEqual(named.chain, [{ policy: 'per_message_override', model: SONNET, verdict: 'accepted' }]);

  const explain = await runSvc(
    [
      'routing',
      'explain',
      '--model',
      'auto',
      '--text',
      fixText(97),
      '--workspace',
      '/tmp', // the key's workspace (gateway-keys.ts issues every key with it)
      '--routing',
      routing,
      '--db-path',
      stack.files.db,
    ],
    { env: stack.files.env },
  );
  assert.equal(explain.code, 0, explain.stderr);
  assert.match(explain.stdout, new RegExp(`^structural   ${history.structural} `, 'm'));
  // 21 haiku requests of this kind; the `auto` one failed: its next twin (the `balanced` one) went to sonnet
  assert.match(
    explain.stdout,
    new RegExp(
      `^slot 4       matched ${history.structural} → ${HAIKU} \\(21 requests, 95\\.2 % success`,
      'm',
    ),
  );
  assert.match(explain.stdout, new RegExp(`^               ${SONNET}: .* \\(below min_samples 20\\)$`, 'm'));
  assert.match(explain.stdout, new RegExp(`^winner       pattern → ${HAIKU}$`, 'm'));
  const asNamed = await runSvc(
    [
      'routing',
      'explain',
      '--model',
      'fast',
      '--text',
      fixText(97),
      '--routing',
      routing,
      '--db-path',
      stack.files.db,
    ],
    { env: stack.files.env },
  );
  assert.match(asNamed.stdout, /^slot 4 {7}not asked: slot 1 \(per_message_override\) won first$/m);

  // a request with a tool schema: explain sizes its --tools with empty schemas, so only the estimate its
  // route.decided recorded brings explain to the fingerprint that request met
  const firstWeather = readEvents(stack.files.db, 'route.decided')[0].payload;
  const estimate = firstWeather.input_tokens_estimate as number;
  assert.equal(typeof estimate, 'number');
  const explainWeather = (extra: string[]) =>
    runSvc(
      [
        'routing',
        'explain',
        '--model',
        'fast',
        '--text',
        'what is the weather in city 00',
        '--tools',
        'get_weather',
        '--workspace',
        '/tmp',
        '--routing',
        routing,
        '--db-path',
        stack.files.db,
        ...extra,
      ],
      { env: stack.files.env },
    );
  const structural = (firstWeather.fingerprint as { structural: string }).structural;
  const replayed = await explainWeather(['--input-tokens', String(estimate)]);
  assert.equal(replayed.code, 0, replayed.stderr);
  assert.match(replayed.stdout, new RegExp(`^structural   ${structural} `, 'm'));
});

// --- helpers ---

interface Row {
  id: string;
  type: string;
  turn_id: string;
  parent_event_id: string | null;
  payload: Record<string, unknown>;
}

/** The events of the last finished request, in id order. */
function lastTurn(db: string): Row[] {
  const conn = new DatabaseSync(db);
  try {
    const rows = conn
      .prepare(
        `SELECT id, type, turn_id, parent_event_id, payload FROM events WHERE turn_id =
           (SELECT turn_id FROM events WHERE type = 'turn.completed' ORDER BY id DESC LIMIT 1) ORDER BY id`,
      )
      .all() as unknown as Array<Omit<Row, 'payload'> & { payload: string }>;
    return rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) }));
  } finally {
    conn.close();
  }
}
