/**
 * One-hour cache writes are billed at their own rate: Anthropic reports them apart in
 * `usage.cache_creation.ephemeral_1h_input_tokens`, and llm.call_completed carries them and a cost that
 * prices them at cache_write_1h (twice input for the built-in Anthropic models), streaming and not.
 * Server-side web searches likewise (`usage.server_tool_use.web_search_requests`): counted on the event as
 * web_search_requests and priced at the model's web_search (USD per 1,000 searches).
 * Paid service tiers likewise (models.yaml `service_tiers`): a call the provider ran at OpenAI's priority tier
 * or Anthropic's fast mode is billed at that tier's prices and held at them; a tier the model has no prices
 * for is left out of the upstream request and named in svc-dropped-params. Anthropic's Priority Tier: a Claude
 * call its usage says ran at `priority` is billed at the model's priority prices, and held at them unless the
 * request says `service_tier: "standard_only"` (Anthropic's default, `auto`, may run there).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { DEFAULT_MODELS_YAML } from '#src/models/default-models.ts';
import { readEvents } from '../helpers/gateway-keys.ts';
import { startGatewayStack } from '../helpers/gateway-stack.ts';
import { makeTempDir } from '../helpers/svc.ts';

const MODEL = 'anthropic:claude-haiku-4-5';

// the built-in table with test rates for gpt-5-mini's priority tier, haiku's fast mode and sonnet's priority
// tier (none for flex)
const MINI_PRICES = 'prices: { input: 0.25, output: 2, cache_read: 0.025, web_search: 10 }';
const HAIKU_PRICES = 'prices: { input: 1, output: 5, cache_read: 0.10, cache_write: 1.25, web_search: 10 }';
const SONNET_PRICES = 'prices: { input: 3, output: 15, cache_read: 0.30, cache_write: 3.75, web_search: 10 }';
const TIERED_MODELS = DEFAULT_MODELS_YAML.replace(
  MINI_PRICES,
  `${MINI_PRICES}\n    service_tiers: { priority: { input: 0.45, output: 3.60 } }`,
)
  .replace(HAIKU_PRICES, `${HAIKU_PRICES}\n    service_tiers: { fast: { input: 6, output: 30 } }`)
  .replace(SONNET_PRICES, `${SONNET_PRICES}\n    service_tiers: { priority: { input: 6, output: 30 } }`);

test('a call with one-hour cache writes is priced at the one-hour rate', async (t) => {
  const dir = makeTempDir('svc-tiers-');
  const models = join(dir.dir, 'models.yaml');
  assert.notEqual(TIERED_MODELS, DEFAULT_MODELS_YAML);
  writeFileSync(models, TIERED_MODELS);
  const stack = await startGatewayStack({ env: { SVC_MODELS: models } });
  t.after(async () => {
    await stack.stop();
    dir.cleanup();
  });
  const system = [
    {
      type: 'text' as const,
      text: 'a long preamble',
      cache_control: { type: 'ephemeral' as const, ttl: '1h' as const },
    },
  ];
  for (const stream of [false, true]) {
    stack.fake.script(['usage=in:10,cache_write:1000,cache_write_1h:600,out:10']);
    const ask = {
      model: MODEL,
      max_tokens: 64,
      system,
      messages: [{ role: 'user' as const, content: 'hi' }],
    };
    if (stream) await stack.anthropic.messages.stream(ask).finalMessage();
    else {
      const message = await stack.anthropic.messages.create(ask);
      assert.equal(message.usage.cache_creation?.ephemeral_1h_input_tokens, 600);
    }
    const call = readEvents(stack.files.db, 'llm.call_completed').at(-1)!.payload;
    assert.equal(call.cache_creation_input_tokens, 1000, `stream ${stream}`);
    assert.equal(call.cache_creation_1h_input_tokens, 600, `stream ${stream}`);
    // haiku: input 1, five-minute write 1.25, one-hour write 2, output 5 USD per million tokens:
    // 10 × 1 + 400 × 1.25 + 600 × 2 + 10 × 5 = 1760 → 0.001760
    assert.equal(call.cost_usd, '0.001760', `stream ${stream}`);
  }

  await t.test(
    'a call above a price step is billed whole at the stepped rates (Haiku 5.5, GPT-6.2 Sol)',
    async () => {
      // Haiku 5.5: 90,000 uncached + 20,000 cache reads = 110,000 > 100,000, so every rate is 5x:
      // 90,000 × 0.50 + 20,000 × 0.05 + 100 × 2.50 = 46,250 µ$
      stack.fake.script(['usage=in:90000,cache_read:20000,out:100']);
      await stack.anthropic.messages.create({
        model: 'claude-haiku-5-5',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'hi' }],
      });
      const haiku = readEvents(stack.files.db, 'llm.call_completed').at(-1)!.payload;
      assert.equal(haiku.model, 'anthropic:claude-haiku-5-5');
      assert.equal(haiku.cost_usd, '0.046250');
      // GPT-6.2 Sol: 200,000 uncached + 80,000 cached = 280,000 > 272,000: input and cache 2x, output 1.5x:
      // 200,000 × 4 + 80,000 × 0.20 + 100 × 15 = 817,500 µ$
      stack.fake.script(['usage=in:200000,cache_read:80000,out:100']);
      await stack.openai.chat.completions.create({
        model: 'gpt-6.2-sol',
        messages: [{ role: 'user', content: 'hi' }],
      });
      const sol = readEvents(stack.files.db, 'llm.call_completed').at(-1)!.payload;
      assert.equal(sol.model, 'openai:gpt-6.2-sol');
      assert.equal(sol.cached_input_tokens, 80_000);
      assert.equal(sol.cost_usd, '0.817500');
    },
  );

  await t.test('server-side web searches are counted and priced on top of the tokens', async () => {
    const ask = {
      model: MODEL,
      max_tokens: 64,
      tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 5 }],
      messages: [{ role: 'user' as const, content: 'news today? [[fake:web-search=2;usage=in:10,out:10]]' }],
    };
    for (const stream of [false, true]) {
      const message = stream
        ? await stack.anthropic.messages.stream(ask).finalMessage()
        : await stack.anthropic.messages.create(ask);
      // the client gets the API's answer as sent: the search blocks and the usage that counts them
      assert.deepEqual(
        message.content.map((b) => b.type),
        ['server_tool_use', 'web_search_tool_result', 'server_tool_use', 'web_search_tool_result', 'text'],
      );
      assert.equal(message.usage.server_tool_use?.web_search_requests, 2, `stream ${stream}`);
      const call = readEvents(stack.files.db, 'llm.call_completed').at(-1)!.payload;
      assert.equal(call.web_search_requests, 2, `stream ${stream}`);
      // haiku: 10 × 1 + 10 × 5 = 60 per million tokens, plus 2 searches × 10 USD per 1,000
      assert.equal(call.cost_usd, '0.020060', `stream ${stream}`);
    }
  });

  await t.test(
    'a call run at a priced service tier is billed at its prices; an unpriced tier is not asked for',
    async () => {
      const last = () => readEvents(stack.files.db, 'llm.call_completed').at(-1)!.payload;
      const sent = () => stack.fake.requests.at(-1)!.body as Record<string, unknown>;
      const usage = '[[fake:usage=in:1000,out:100]]';
      const chat = { model: 'mini', messages: [{ role: 'user' as const, content: `hi ${usage}` }] };
      // gpt-5-mini at priority: 1000 × 0.45 + 100 × 3.60 = 810 per million (standard: 450)
      for (const stream of [false, true]) {
        const { data, response } = await stack.openai.chat.completions
          .create({ ...chat, service_tier: 'priority', stream })
          .withResponse();
        if (stream) for await (const _ of data as AsyncIterable<unknown>);
        assert.equal(response.headers.get('svc-dropped-params'), null);
        assert.equal(sent().service_tier, 'priority');
        assert.equal(last().cost_usd, '0.000810', `chat stream ${stream}`);
        assert.equal(last().service_tier, 'priority');
      }
      for (const stream of [false, true]) {
        const ask = { model: 'mini', input: `hi ${usage}`, service_tier: 'priority' as const, stream };
        const { data } = await stack.openai.responses.create(ask).withResponse();
        if (stream) for await (const _ of data as AsyncIterable<unknown>);
        assert.equal(last().cost_usd, '0.000810', `responses stream ${stream}`);
      }
      // flex has no prices on gpt-5-mini: sent at the standard tier, named, billed at the standard prices
      const flex = await stack.openai.chat.completions
        .create({ ...chat, service_tier: 'flex' })
        .withResponse();
      assert.equal(flex.response.headers.get('svc-dropped-params'), 'service_tier');
      assert.equal(flex.data.service_tier, 'default');
      assert.equal('service_tier' in sent(), false);
      assert.equal(last().cost_usd, '0.000450');
      assert.equal(last().service_tier, undefined);
      // a value asking for no paid tier goes as sent
      await stack.openai.chat.completions.create({ ...chat, service_tier: 'auto' });
      assert.equal(sent().service_tier, 'auto');
      assert.equal(last().cost_usd, '0.000450');

      // Anthropic fast mode on haiku (priced): 1000 × 6 + 100 × 30 = 9000 per million (standard: 1500)
      const fast = { max_tokens: 64, messages: [{ role: 'user' as const, content: `hi ${usage}` }] };
      for (const stream of [false, true]) {
        const ask = { ...fast, model: MODEL, speed: 'fast' } as Parameters<
          typeof stack.anthropic.messages.create
        >[0];
        if (stream) await stack.anthropic.messages.stream(ask).finalMessage();
        else await stack.anthropic.messages.create(ask);
        assert.equal(sent().speed, 'fast');
        assert.equal(last().cost_usd, '0.009000', `fast stream ${stream}`);
        assert.equal(last().service_tier, 'fast');
      }
      // on sonnet (no fast prices) it is left out: 1000 × 3 + 100 × 15 = 4500 per million
      const sonnet = await stack.anthropic.messages
        .create({ ...fast, model: 'anthropic:claude-sonnet-4-5', speed: 'fast' } as Parameters<
          typeof stack.anthropic.messages.create
        >[0])
        .withResponse();
      assert.equal(sonnet.response.headers.get('svc-dropped-params'), 'speed');
      assert.equal('speed' in sent(), false);
      assert.equal(last().cost_usd, '0.004500');

      // Anthropic's Priority Tier on sonnet (priced): an account with priority capacity runs auto (the default)
      // there and says so in usage.service_tier: 1000 × 6 + 100 × 30 = 9000 per million
      const priorityUsage = '[[fake:usage=in:1000,out:100;priority-tier]]';
      const onPriority = {
        max_tokens: 64,
        model: 'anthropic:claude-sonnet-4-5',
        messages: [{ role: 'user' as const, content: `hi [[fake:usage=in:1000,out:100;priority-tier]]` }],
      };
      for (const stream of [false, true]) {
        const message = stream
          ? await stack.anthropic.messages.stream(onPriority).finalMessage()
          : await stack.anthropic.messages.create(onPriority);
        assert.equal(message.usage.service_tier, 'priority');
        assert.equal(last().cost_usd, '0.009000', `priority stream ${stream}`);
        assert.equal(last().service_tier, 'priority');
      }
      // a Messages client on gpt-5-mini, in a project whose default tier is priority: its answer, re-encoded,
      // says the tier the call ran (and is billed) at
      const onMini = {
        ...onPriority,
        model: 'mini',
        messages: [{ role: 'user' as const, content: `hi [[fake:usage=in:1000,out:100;priority-tier]]` }],
      };
      for (const stream of [false, true]) {
        const message = stream
          ? await stack.anthropic.messages.stream(onMini).finalMessage()
          : await stack.anthropic.messages.create(onMini);
        assert.equal(message.usage.service_tier, 'priority', `mini stream ${stream}`);
        assert.equal(last().cost_usd, '0.000810');
      }
      const onDefault = await stack.anthropic.messages.create({ ...onMini, messages: fast.messages });
      assert.equal(onDefault.usage.service_tier, 'standard');
      // and an OpenAI client on sonnet run on Anthropic's Priority Tier reads priority (standard: default)
      const onSonnet = { model: 'anthropic:claude-sonnet-4-5', messages: onPriority.messages };
      for (const stream of [false, true]) {
        const tiers: unknown[] = [];
        if (stream) {
          const chunks = await stack.openai.chat.completions.create({ ...onSonnet, stream });
          for await (const chunk of chunks) tiers.push(chunk.service_tier);
        } else tiers.push((await stack.openai.chat.completions.create(onSonnet)).service_tier);
        assert.deepEqual(new Set(tiers), new Set(['priority']), `chat on sonnet stream ${stream}`);
        const answer = stream
          ? await stack.openai.responses
              .stream({ model: onSonnet.model, input: `hi ${priorityUsage}` })
              .finalResponse()
          : await stack.openai.responses.create({ model: onSonnet.model, input: `hi ${priorityUsage}` });
        assert.equal(answer.service_tier, 'priority', `responses on sonnet stream ${stream}`);
      }
      const standard = await stack.openai.chat.completions.create({ ...onSonnet, messages: fast.messages });
      assert.equal(standard.service_tier, 'default');
      // standard_only keeps it on standard capacity: the standard prices
      await stack.anthropic.messages.create({ ...onPriority, service_tier: 'standard_only' });
      assert.equal(sent().service_tier, 'standard_only');
      assert.equal(last().cost_usd, '0.004500');
      assert.equal(last().service_tier, undefined);
      // held at the priority worst case unless standard_only: a cap between the standard and the priority
      // worst case of 1,000 output tokens (0.015 and 0.030 USD) admits standard_only and refuses auto
      const cappedClaude = await stack.issue(['--daily-cap-usd', '0.02']);
      const claude = new Anthropic({ apiKey: cappedClaude.token, baseURL: stack.gw.url, maxRetries: 0 });
      const big = { ...onPriority, max_tokens: 1000, messages: [{ role: 'user' as const, content: 'hi' }] };
      await claude.messages.create({ ...big, service_tier: 'standard_only' });
      await assert.rejects(claude.messages.create(big), { status: 429 });

      // the hold is the asked tier's worst case: a cap between the standard and the priority worst case of
      // 1,000 output tokens (0.002 and 0.0036 USD) admits the standard request and refuses the priority one
      const capped = await stack.issue(['--daily-cap-usd', '0.003']);
      const client = new OpenAI({ apiKey: capped.token, baseURL: `${stack.gw.url}/v1`, maxRetries: 0 });
      const small = {
        model: 'mini',
        max_completion_tokens: 1000,
        messages: [{ role: 'user' as const, content: 'hi' }],
      };
      await client.chat.completions.create({ ...small, service_tier: 'default' });
      await assert.rejects(client.chat.completions.create({ ...small, service_tier: 'priority' }), {
        status: 429,
      });
      // no tier, or auto, runs at the project's default tier, which can be priority: held at it, as is a
      // translated request (sent without the field)
      for (const ask of [small, { ...small, service_tier: 'auto' as const }])
        await assert.rejects(client.chat.completions.create(ask), { status: 429 });
      const viaMessages = new Anthropic({ apiKey: capped.token, baseURL: stack.gw.url, maxRetries: 0 });
      await assert.rejects(
        viaMessages.messages.create({ ...big, model: 'mini', service_tier: 'standard_only' }),
        { status: 429 },
      );
    },
  );
});
