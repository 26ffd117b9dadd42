/**
 * A global default whose provider has no key (SVC_GATEWAY_GLOBAL_DEFAULT or routing.yaml naming an OpenAI
 * model on a gateway with only ANTHROPIC_API_KEY) turns every request that no alias, rule or workspace
 * claims into 503 routing_failed; the start says so, naming the variable to set.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readEnv } from '#src/config/env.ts';
import { createLogger } from '#src/lib/log.ts';
import { loadCallConfig } from '#src/llm/load-call-config.ts';

function warningsOf(vars: Record<string, string>): Array<Record<string, unknown>> {
  const lines: string[] = [];
  loadCallConfig({ env: readEnv(vars), log: createLogger({ write: (l) => lines.push(l) }) });
  return lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'warn');
}

test('a global default whose provider has no key is warned at load, naming the key to set', () => {
  assert.deepEqual(
    warningsOf({ ANTHROPIC_API_KEY: 'k', SVC_GATEWAY_GLOBAL_DEFAULT: 'openai:gpt-5' }).map((w) => [
      w.msg,
      w.set,
    ]),
    [['the global default cannot be served: its provider has no key', 'OPENAI_API_KEY']],
  );
  assert.deepEqual(warningsOf({ ANTHROPIC_API_KEY: 'k' }), [], 'the built-in default is served');
  assert.deepEqual(warningsOf({}), [], 'no provider key at all is warned elsewhere');
});
