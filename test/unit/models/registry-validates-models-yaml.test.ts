import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isSvcError, type SvcError } from '#src/lib/errors.ts';
import { loadModelRegistry, parseModelRegistry, splitCanonicalId } from '#src/models/registry.ts';

const MODEL = (id: string, extra = '') => `  - id: ${id}
    tier: fast
    capabilities: { supports_images: false, supports_tools: true, max_context_tokens: 1000, max_output_tokens: 100 }
${extra}`;

function expectInvalid(text: string, ...fragments: string[]): SvcError {
  try {
    parseModelRegistry(text, 'models.yaml');
  } catch (err) {
    assert.ok(isSvcError(err), String(err));
    assert.equal(err.code, 'config_invalid');
    assert.match(err.message, /^models\.yaml/);
    for (const f of fragments) assert.ok(err.message.includes(f), `${err.message} should mention ${f}`);
    return err;
  }
  assert.fail('expected config_invalid');
}

test('the built-in registry loads and holds the three adapters at list prices', () => {
  const reg = loadModelRegistry(undefined);
  assert.equal(reg.source, 'built-in models.yaml');
  const adapters = new Set(reg.list().map((m) => m.adapter));
  assert.deepEqual([...adapters].sort(), ['anthropic', 'openai', 'openrouter']);
  assert.deepEqual(reg.get('anthropic:claude-sonnet-4-5')?.prices, {
    input: '3',
    output: '15',
    cache_read: '0.30',
    cache_write: '3.75',
    cache_write_1h: '6',
    web_search: '10',
  });
  assert.deepEqual(reg.get('anthropic:claude-haiku-4-5')?.prices, {
    input: '1',
    output: '5',
    cache_read: '0.10',
    cache_write: '1.25',
    cache_write_1h: '2',
    web_search: '10',
  });
  assert.equal(reg.get('openai:gpt-5')?.prices?.cache_read, '0.125');
  assert.equal(reg.get('openai:gpt-5-nano')?.prices?.output, '0.40');
  assert.ok(reg.get('openrouter:meta-llama/llama-3.3-70b-instruct'));
  assert.match(reg.pricingVersion, /\S/);
});

test('aliases fast, balanced, deep, mini and family names resolve to canonical entries', () => {
  const reg = loadModelRegistry(undefined);
  assert.equal(reg.resolveAlias('fast')?.id, 'anthropic:claude-haiku-4-5');
  assert.equal(reg.resolveAlias('balanced')?.id, 'anthropic:claude-sonnet-4-5');
  assert.equal(reg.resolveAlias('deep')?.id, 'anthropic:claude-opus-5-5');
  assert.equal(reg.resolveAlias('opus')?.id, 'anthropic:claude-opus-5-5');
  assert.equal(reg.resolveAlias('opus-4.1')?.id, 'anthropic:claude-opus-4-1');
  assert.equal(reg.resolveAlias('fable')?.id, 'anthropic:claude-fable-5-1');
  assert.equal(reg.resolveAlias('mini')?.id, 'openai:gpt-5-mini');
  // sonnet names the current Sonnet; balanced stays with the global default (DECISIONS §1)
  assert.equal(reg.resolveAlias('sonnet')?.id, 'anthropic:claude-sonnet-5-5');
  assert.equal(reg.resolveAlias('sonnet-4.5')?.id, 'anthropic:claude-sonnet-4-5');
  assert.equal(reg.resolve('openai:gpt-5')?.id, 'openai:gpt-5');
  assert.equal(reg.resolveAlias('openai:gpt-5'), undefined);
});

test('a bare provider model name resolves to nothing', () => {
  const reg = loadModelRegistry(undefined);
  assert.equal(reg.resolve('claude-sonnet-4-5'), undefined);
  assert.equal(reg.resolve('gpt-5'), undefined);
});

test('only the first colon separates adapter and model name', () => {
  assert.deepEqual(splitCanonicalId('openrouter:meta-llama/llama-3.3-70b-instruct:free'), {
    adapter: 'openrouter',
    modelName: 'meta-llama/llama-3.3-70b-instruct:free',
  });
  assert.equal(splitCanonicalId('ft:gpt-4o:org'), undefined);
});

test('prices are read as exact decimal strings, never floats', () => {
  const reg = parseModelRegistry(
    `pricing_version: v1\nmodels:\n${MODEL('openai:x', '    prices: { input: 0.30, output: 1.100000000000000000001 }\n')}`,
    'm.yaml',
  );
  assert.deepEqual(reg.get('openai:x')?.prices, {
    input: '0.30',
    output: '1.100000000000000000001',
    cache_read: '0.30',
    cache_write: '0.30',
    cache_write_1h: '0.6',
    web_search: '10',
  });
  assert.deepEqual(reg.priceTable(), {
    pricing_version: 'v1',
    models: { 'openai:x': reg.get('openai:x')?.prices },
  });
});

test('a model without prices is unpriced (null prices)', () => {
  const reg = parseModelRegistry(`pricing_version: v1\nmodels:\n${MODEL('openai:x')}`, 'm.yaml');
  assert.equal(reg.get('openai:x')?.prices, null);
});

test('an invalid price names the file, the field path and the reason', () => {
  const err = expectInvalid(
    `pricing_version: v1\nmodels:\n${MODEL('openai:a')}${MODEL('openai:b')}${MODEL('openai:c')}${MODEL('openai:d', '    prices: { input: -1, output: 2 }\n')}`,
    'models[3].prices.input',
    'non-negative decimal',
  );
  assert.deepEqual(err.details?.errors, [
    'models[3].prices.input: must be a non-negative decimal number of USD per million tokens, such as 3 or 0.30',
  ]);
});

test('exponent notation in a price is rejected', () => {
  expectInvalid(
    `pricing_version: v1\nmodels:\n${MODEL('openai:a', '    prices: { input: 1e-3, output: 2 }\n')}`,
    'models[0].prices.input',
  );
});

test('missing fields, unknown fields and wrong types are reported with their paths', () => {
  expectInvalid(`models:\n${MODEL('openai:a')}`, 'pricing_version');
  expectInvalid(`pricing_version: v\nmodels:\n${MODEL('openai:a', '    colour: red\n')}`, 'models[0].colour');
  expectInvalid(
    `pricing_version: v\nmodels:\n  - id: openai:a\n    tier: fast\n    capabilities: { supports_images: 1, supports_tools: true, max_context_tokens: 1000, max_output_tokens: 100 }\n`,
    'models[0].capabilities.supports_images',
  );
  expectInvalid(`pricing_version: v\nmodels:\n${MODEL('gemini:x')}`, 'models[0].id', 'canonical id');
  expectInvalid(`pricing_version: v\nmodels: []\n`, 'models', 'at least one');
});

test('a YAML syntax error names the file and line', () => {
  expectInvalid('pricing_version: v\nmodels: [\n', 'not valid YAML', 'line');
});

test('aliases are unique across the registry', () => {
  expectInvalid(
    `pricing_version: v\nmodels:\n${MODEL('openai:a', '    aliases: [fast]\n')}${MODEL('openai:b', '    aliases: [fast]\n')}`,
    'models[1].aliases[0]',
    'already used by openai:a',
  );
});

test('an alias may not equal a bare provider model name', () => {
  expectInvalid(
    `pricing_version: v\nmodels:\n${MODEL('openai:gpt-5', '    aliases: [gpt-5]\n')}`,
    'models[0].aliases[0]',
    'bare provider model name',
  );
});

test('a file without that model still may not take a provider model name as an alias (README: gpt-5 cannot be one)', () => {
  expectInvalid(
    `pricing_version: v\nmodels:\n${MODEL('openai:local-llm', '    aliases: [gpt, gpt-5]\n')}`,
    'models[0].aliases[1]',
    'bare provider model name',
  );
  const reg = parseModelRegistry(
    `pricing_version: v\nmodels:\n${MODEL('openai:local-llm', '    aliases: [gpt]\n')}`,
    'm',
  );
  assert.equal(reg.resolveAlias('gpt')?.id, 'openai:local-llm');
});

test('duplicate ids and an adapter that contradicts the id prefix are rejected', () => {
  expectInvalid(
    `pricing_version: v\nmodels:\n${MODEL('openai:a')}${MODEL('openai:a')}`,
    'models[1].id',
    'duplicate',
  );
  expectInvalid(
    `pricing_version: v\nmodels:\n${MODEL('openai:a', '    adapter: anthropic\n')}`,
    'models[0].adapter',
  );
});

test('loadModelRegistry reads a file and reports an unreadable one as config_invalid', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-models-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'models.yaml');
  writeFileSync(file, `pricing_version: v9\nmodels:\n${MODEL('openai:a')}`);
  assert.equal(loadModelRegistry(file).pricingVersion, 'v9');
  assert.equal(loadModelRegistry(file).source, file);
  assert.throws(
    () => loadModelRegistry(join(dir, 'missing.yaml')),
    (err: unknown) =>
      isSvcError(err) &&
      err.code === 'config_invalid' &&
      err.message.includes('missing.yaml') &&
      // one sentence that says what to do (DECISIONS §2)
      /^Cannot read the model registry .*--models or SVC_MODELS.*built-in/.test(err.message),
  );
});

test('a broken models.yaml is one sentence that says what to do (DECISIONS §2)', () => {
  for (const text of ['pricing_version: v\nmodels: [\n', 'models: 5\n']) {
    const err = expectInvalid(text);
    assert.match(err.message, /; fix the file and try again\.$/);
    assert.doesNotMatch(err.message, /\n/);
  }
});
