/**
 * A stream that ends before the provider states its output (a cancel, a break) is billed on what it sent:
 * counted as the routing estimate counts text, by script (README: "output is at least the deltas sent,
 * weighed by script"), so a Japanese answer is not billed at a quarter of its tokens.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { emptyUsage } from '#src/canonical/response.ts';
import { StreamBuilder } from '#src/canonical/stream.ts';
import { resolvePartialUsage } from '#src/llm/partial-usage.ts';

function outputOf(send: (b: StreamBuilder) => void): number {
  const b = new StreamBuilder();
  b.start('msg_1', 'm');
  send(b);
  return resolvePartialUsage(emptyUsage(), 10, b.generatedQuarterTokens()).output_tokens;
}

test('the output of an unfinished stream counts its deltas by script, as the input estimate does', () => {
  assert.equal(
    outputOf((b) => b.text(b.openText(), 'a'.repeat(400))),
    100,
  );
  assert.equal(
    outputOf((b) => b.text(b.openText(), '日本語'.repeat(100))),
    300,
  );
  assert.equal(
    outputOf((b) => b.thinking(b.openThinking(), 'Привет'.repeat(50))),
    150,
  );
  // tool names and arguments too
  assert.equal(
    outputOf((b) => {
      const { content_block_index: i } = b.openToolUse('toolu_1', 'ab');
      b.toolInput(i, '{"q":"東京"}');
    }),
    Math.ceil((2 + 8 + 2 * 4) / 4),
  );
});

test('the output estimate never passes the most output the request allows, a stated count does', () => {
  const b = new StreamBuilder();
  b.start('msg_1', 'm');
  b.text(b.openText(), '日本語'.repeat(100));
  assert.equal(
    resolvePartialUsage(emptyUsage(), 10, b.generatedQuarterTokens(), false, 64).output_tokens,
    64,
  );
  const stated = { ...emptyUsage(), output_tokens: 80 };
  assert.equal(resolvePartialUsage(stated, 10, b.generatedQuarterTokens(), false, 64).output_tokens, 80);
});
