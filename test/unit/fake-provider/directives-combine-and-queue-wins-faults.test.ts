import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { DirectiveError, parseDirectives, resolvePlan, toStep } from '../../fake-provider/script.ts';

test('directives in one text combine, later items win', () => {
  const step = parseDirectives(
    'hi [[fake:text=hello world;tool_calls=2]] and [[fake:error=429;retry-after=1;retry-after-ms=1500]] [[fake:text=bye]]',
  );
  assert.deepEqual(step, { text: 'bye', toolCalls: 2, error: 429, retryAfter: '1', retryAfterMs: '1500' });
});

test('every key of the grammar parses', () => {
  assert.deepEqual(
    parseDirectives(
      '[[fake:tool_call;thinking;image-check;stop=max_tokens;should-retry=false;message=no way;hang;reset-after=3;' +
        'malformed;stream-error=529;drip=50;slow-headers=20]]',
    ),
    {
      toolCalls: 1,
      thinking: true,
      imageCheck: true,
      stopReason: 'max_tokens',
      shouldRetry: false,
      message: 'no way',
      hang: true,
      resetAfter: 3,
      malformed: 2,
      streamError: 529,
      dripMs: 50,
      slowHeadersMs: 20,
    },
  );
  assert.deepEqual(
    parseDirectives('[[fake:usage=in:100,out:20,cache_read:30,cache_write:5,reasoning:4,cost:0.5]]'),
    {
      usage: { input: 100, output: 20, cacheRead: 30, cacheWrite: 5, reasoning: 4, cost: 0.5 },
    },
  );
  assert.deepEqual(parseDirectives('[[fake:thinking=Let me see;malformed=0;TOOL-CALLS=3]]'), {
    thinking: 'Let me see',
    malformed: 0,
    toolCalls: 3,
  });
  assert.deepEqual(parseDirectives('[[fake:bad-body=no-usage;no_terminal;oversize=1048576]]'), {
    badBody: 'no-usage',
    noTerminal: true,
    oversize: 1048576,
  });
  assert.deepEqual(parseDirectives('[[fake:stop-sequence=###;stream-error=529;stream-error-after=0]]'), {
    stopReason: 'stop_sequence',
    stopSequence: '###',
    streamError: 529,
    streamErrorAfter: 0,
  });
  assert.throws(() => parseDirectives('[[fake:bad-body=nice]]'), /unknown bad-body 'nice'/);
  assert.deepEqual(parseDirectives('no directive here [[other:x]]'), {});
});

test('unknown keys and bad values are refused with a message naming them', () => {
  assert.throws(() => parseDirectives('[[fake:explode]]'), /unknown directive 'explode'/);
  assert.throws(() => parseDirectives('[[fake:error=418]]'), /unsupported status 418/);
  assert.throws(() => parseDirectives('[[fake:drip=fast]]'), DirectiveError);
  assert.throws(() => parseDirectives('[[fake:usage=in:x]]'), /bad usage item/);
  assert.throws(() => parseDirectives('[[fake:text=]]'), /'text' needs a value/);
});

test('a queued step replaces the text’s faults but keeps its reply shape', () => {
  const fromText = parseDirectives('[[fake:error=500;drip=10;text=from text;thinking]]');
  assert.deepEqual(resolvePlan(undefined, fromText), fromText);
  assert.deepEqual(resolvePlan(toStep('ok'), fromText), { text: 'from text', thinking: true });
  assert.deepEqual(resolvePlan(toStep('[[fake:error=429;retry-after=1]]'), fromText), {
    text: 'from text',
    thinking: true,
    error: 429,
    retryAfter: '1',
  });
  assert.deepEqual(resolvePlan({ text: 'scripted' }, fromText), { text: 'scripted', thinking: true });
});

test('npm run fake-provider starts on the given port, prints the base URLs and stops on SIGTERM', async (t) => {
  const child = spawn(process.execPath, ['test/fake-provider/main.ts', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout.setEncoding('utf8');
  for await (const chunk of child.stdout) {
    out += chunk;
    if (out.includes('Ctrl-C')) break;
  }
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
  assert.ok(url, out);
  assert.match(out, new RegExp(`OPENAI_BASE_URL=${url}/v1 `));
  assert.match(out, new RegExp(`OPENROUTER_BASE_URL=${url}/api/v1 `));
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer k' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(response.status, 200);
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  assert.equal(code, 0);
});
