import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildSystemPrompt } from '#src/agent/system-prompt.ts';
import { WORKSPACE_TOOLS } from '#src/agent/tools/registry.ts';

function toolLine(prompt: string): string[] {
  const line = prompt.split('\n').find((l) => l.startsWith('Tools: '))!;
  return line.slice('Tools: '.length, -1).split(', ');
}

test('the planner is told every tool and the workspace; AGENTS.md is appended', (t) => {
  const ws = mkdtempSync(join(tmpdir(), 'svc-prompt-'));
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  writeFileSync(join(ws, 'AGENTS.md'), 'Run npm test before answering.\n');
  const prompt = buildSystemPrompt(ws, WORKSPACE_TOOLS, false);
  assert.ok(prompt.includes(ws));
  assert.deepEqual(
    toolLine(prompt),
    WORKSPACE_TOOLS.map((x) => x.name),
  );
  assert.match(prompt, /Run npm test before answering\./);
});

test('a worker is not told about delegate, which it is not offered (workers cannot delegate)', () => {
  const prompt = buildSystemPrompt('/w', WORKSPACE_TOOLS, true);
  assert.ok(!toolLine(prompt).includes('delegate'));
  assert.doesNotMatch(prompt, /Use delegate/);
});
