/**
 * Request bodies of every wire whose fingerprints (structural s1 and hybrid sketch h1) are pinned by
 * request-fingerprints-are-frozen.test.ts: ASCII and other scripts, emoji, CJK, long texts, empty ones,
 * tool calls and results, images, system prompts, Responses input items and Anthropic content blocks.
 */
import type { CanonicalRequest } from '#src/canonical/request.ts';
import { decodeAnthropicRequest } from '#src/gateway/shapes/anthropic/decode.ts';
import { decodeOpenAIRequest } from '#src/gateway/shapes/openai/decode.ts';
import { decodeResponsesRequest } from '#src/gateway/shapes/responses/decode.ts';
import { describeRequest } from '#src/routing/request-facts.ts';
import { createPredicateEnv } from '#src/routing/when.ts';
import { ALL_ADAPTERS, policyOf, registry } from './routing-fixture.ts';

export interface CorpusCase {
  name: string;
  wire: 'openai' | 'anthropic' | 'responses';
  body: Record<string, unknown>;
  workspace: string | null;
}

/** The fingerprint route.decided records for a case, computed as the gateway does. */
export function fingerprintOf(c: CorpusCase): { structural: string; sketch: string[]; messages: number } {
  const req: CanonicalRequest =
    c.wire === 'openai'
      ? decodeOpenAIRequest(c.body)
      : c.wire === 'anthropic'
        ? decodeAnthropicRequest(c.body)
        : decodeResponsesRequest(c.body);
  const facts = describeRequest(req, { workspacePath: c.workspace });
  return createPredicateEnv(facts, CONTEXT).fingerprint();
}

const CONTEXT = { policy: policyOf('rules: []'), registry, availableAdapters: ALL_ADAPTERS };

const SYSTEM =
  'You are a concise assistant for an engineering team. Answer in plain English, prefer short ' +
  'paragraphs, cite file paths when you mention code, and say so when you are unsure.';
const BENCH =
  'Our service answers slowly after a deploy. The p50 latency went from 40 ms to 65 ms and CPU per ' +
  'request doubled, while the request mix did not change. What are the first three things to check, ' +
  'and which profiler output would tell us where the time goes? Please keep it short; we are in the ' +
  'middle of an incident and need a plan we can follow right away.';
/** About 4 KB of ASCII: words repeat, new ones keep coming past the sketch's 1,024 characters. */
const LONG = Array.from(
  { length: 60 },
  (_, i) => `Step ${i}: check handler_${i % 7} in src/module${i % 11}/fileName${i}.ts for the retryCount bug`,
).join('. ');
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const TOOL = {
  type: 'function',
  function: {
    name: 'read_file',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
};
const chat = (messages: unknown[], extra: Record<string, unknown> = {}) => ({
  model: 'openai:gpt-5-mini',
  messages,
  ...extra,
});
const user = (content: unknown) => ({ role: 'user', content });
const claude = (messages: unknown[], extra: Record<string, unknown> = {}) => ({
  model: 'anthropic:claude-haiku-4-5',
  max_tokens: 256,
  messages,
  ...extra,
});

export const CORPUS: CorpusCase[] = [
  {
    name: 'bench prompt',
    wire: 'openai',
    workspace: null,
    body: chat([{ role: 'system', content: SYSTEM }, user(BENCH)]),
  },
  { name: 'empty user text', wire: 'openai', workspace: null, body: chat([user('')]) },
  {
    name: 'only function words and punctuation',
    wire: 'openai',
    workspace: '/srv/app',
    body: chat([user('The and of?! a I -- ... it is')]),
  },
  { name: 'one word', wire: 'openai', workspace: null, body: chat([user('hello')]) },
  {
    name: 'identifiers, digits, acronyms',
    wire: 'openai',
    workspace: '/srv/app',
    body: chat([
      user(
        'Why does parseConfigYaml fail with TS2322 on line 104 of user_store.ts? HTTPServer x86_64 v1.2.3 0xFF __init__ A1b2C3',
      ),
    ]),
  },
  {
    name: 'text parts and an image URL',
    wire: 'openai',
    workspace: null,
    body: chat([
      user([
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image_url', image_url: { url: 'https://example.test/cat.png' } },
        { type: 'text', text: 'Describe the colours.' },
      ]),
    ]),
  },
  {
    name: 'tool call then tool result last',
    wire: 'openai',
    workspace: '/home/dev/repo',
    body: chat(
      [
        { role: 'system', content: SYSTEM },
        user('Open the README and summarise it'),
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'read_file', arguments: '{"path":"README.md"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '# svc\nA gateway.' },
      ],
      { tools: [TOOL] },
    ),
  },
  {
    name: 'accented Latin',
    wire: 'openai',
    workspace: null,
    body: chat([user('Café naïve façade: pourquoi le déploiement échoue-t-il après la mise à jour?')]),
  },
  {
    name: 'emoji',
    wire: 'openai',
    workspace: null,
    body: chat([user('deploy 🚀 failed 😞 again 👍🏽 fix it 🔧🔧')]),
  },
  {
    name: 'Chinese',
    wire: 'openai',
    workspace: null,
    body: chat([user('修复登录模块中失败的测试，并解释原因。')]),
  },
  {
    name: 'Japanese kana and kanji',
    wire: 'openai',
    workspace: null,
    body: chat([user('このテストが失敗する理由を教えてください。カタカナも')]),
  },
  {
    name: 'Korean',
    wire: 'openai',
    workspace: null,
    body: chat([user('로그인 테스트가 실패하는 이유를 알려주세요')]),
  },
  {
    name: 'Greek and German case folding',
    wire: 'openai',
    workspace: null,
    body: chat([user('ΟΔΥΣΣΕΥΣ Straße STRASSE İstanbul ǅemal ﬁle')]),
  },
  {
    name: 'a single CJK character among words',
    wire: 'openai',
    workspace: null,
    body: chat([user('check 日 and 本 in mixedCase日本Words')]),
  },
  { name: 'long ASCII text (4 KB)', wire: 'openai', workspace: '/srv/app', body: chat([user(LONG)]) },
  {
    name: 'ASCII head, non-ASCII past 1,024 characters',
    wire: 'openai',
    workspace: null,
    body: chat([user(`${LONG.slice(0, 1030)} café 日本`)]),
  },
  {
    name: 'a word cut at 1,024 characters',
    wire: 'openai',
    workspace: null,
    body: chat([user(`${'x'.repeat(1020)} abcdefgh tail`)]),
  },
  {
    name: 'non-ASCII inside the first 1,024 characters of a long text',
    wire: 'openai',
    workspace: null,
    body: chat([user(`é ${LONG}`)]),
  },
  {
    name: 'control characters and a lone surrogate',
    wire: 'openai',
    workspace: null,
    body: chat([user('tab\there\u0000nul\u0007bell \ud800 lone\r\nCRLF')]),
  },
  {
    name: 'curly quotes, dashes, an ellipsis and a combining accent',
    wire: 'openai',
    workspace: null,
    body: chat([user('Don’t “retry” the deploy — check the cafe\u0301 logs… then the HTTPServer’s 502s')]),
  },
  {
    name: 'an astral letter and digit among emoji',
    wire: 'openai',
    workspace: null,
    body: chat([user('solve 𝑥 plus 𝟎 equals 𝑥 😀 🚀 fast')]),
  },
  {
    name: 'nine messages',
    wire: 'openai',
    workspace: null,
    body: chat(
      Array.from({ length: 9 }, (_, i) =>
        i % 2 === 0
          ? user(`turn ${i} question about caching`)
          : { role: 'assistant', content: `answer ${i}` },
      ),
    ),
  },
  {
    name: 'Anthropic system blocks and an image block',
    wire: 'anthropic',
    workspace: '/srv/app',
    body: claude(
      [
        user([
          { type: 'text', text: 'What does this chart show about latency?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        ]),
      ],
      { system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }] },
    ),
  },
  {
    name: 'Anthropic tool_use then a tool_result-only user turn',
    wire: 'anthropic',
    workspace: '/srv/app',
    body: claude(
      [
        user('List the files in src'),
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Listing.' },
            { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls src' } },
          ],
        },
        user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'main.ts\nlib.ts' }]),
      ],
      {
        system: SYSTEM,
        tools: [
          {
            name: 'bash',
            description: 'Run a command',
            input_schema: { type: 'object', properties: { command: { type: 'string' } } },
          },
          { type: 'web_search_20250305', name: 'web_search' },
        ],
      },
    ),
  },
  {
    name: 'Anthropic several text blocks in the last user turn',
    wire: 'anthropic',
    workspace: null,
    body: claude([
      user([
        { type: 'text', text: '<system-reminder>Use the todo list.</system-reminder>' },
        { type: 'text', text: 'Refactor the billingService into smaller modules' },
        { type: 'text', text: '' },
      ]),
    ]),
  },
  {
    name: 'Anthropic thinking blocks and Cyrillic',
    wire: 'anthropic',
    workspace: null,
    body: claude([
      user('Почему тест падает?'),
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Look at the assertion.', signature: 'sig' },
          { type: 'text', text: 'Покажите лог.' },
        ],
      },
      user('Вот лог: ошибка таймаута в модуле оплаты'),
    ]),
  },
  {
    name: 'Anthropic string system and an empty-text user turn',
    wire: 'anthropic',
    workspace: '/srv/other',
    body: claude(
      [
        user('first question about queues'),
        { role: 'assistant', content: 'ok' },
        user([{ type: 'text', text: '' }]),
      ],
      { system: SYSTEM },
    ),
  },
  {
    name: 'Responses input string with instructions',
    wire: 'responses',
    workspace: null,
    body: { model: 'openai:gpt-5-mini', instructions: SYSTEM, input: BENCH },
  },
  {
    name: 'Responses message items with an input image',
    wire: 'responses',
    workspace: '/srv/app',
    body: {
      model: 'openai:gpt-5-mini',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Compare these two screenshots' },
            { type: 'input_image', image_url: 'https://example.test/a.png' },
          ],
        },
      ],
    },
  },
  {
    name: 'Responses function_call and function_call_output items',
    wire: 'responses',
    workspace: '/srv/app',
    body: {
      model: 'openai:gpt-5-mini',
      input: [
        { role: 'user', content: 'What is the weather in Paris and Tokyo?' },
        { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'c1', output: '18C sunny' },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
        { type: 'web_search' },
      ],
    },
  },
  {
    name: 'Responses Arabic and Hebrew',
    wire: 'responses',
    workspace: null,
    body: {
      model: 'openai:gpt-5-mini',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'لماذا يفشل الاختبار؟ למה הבדיקה נכשלת' }] },
      ],
    },
  },
  {
    name: 'Responses developer item and a long mixed-script prompt',
    wire: 'responses',
    workspace: null,
    body: {
      model: 'openai:gpt-5-mini',
      input: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: `${BENCH} 日本語のテスト 😀 ${LONG.slice(0, 2000)}` },
      ],
    },
  },
];
