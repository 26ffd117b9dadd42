import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildSystemPrompt } from '#src/agent/system-prompt.ts';
import { WORKSPACE_TOOLS } from '#src/agent/tools/registry.ts';

function toolLine(prompt: string): string[] {
  const line = prompt.split('\n').find((l) => l.startsWith('Tools: '))!;
  return line.slice('Tools: '.length, -1).split(', ');
}

test('the planner is told every tool and the workspace; AGENTS.md is appended', async (t) => {
  const ws = mkdtempSync(join(tmpdir(), 'svc-prompt-'));
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  writeFileSync(join(ws, 'AGENTS.md'), 'Run npm test before answering.\n');
  const prompt = await buildSystemPrompt(ws, ws, WORKSPACE_TOOLS, false);
  assert.ok(prompt.includes(ws));
  assert.deepEqual(
    toolLine(prompt),
    WORKSPACE_TOOLS.map((x) => x.name),
  );
  assert.match(prompt, /Run npm test before answering\./);
});

test('a worker is not told about delegate, which it is not offered (workers cannot delegate)', async () => {
  const prompt = await buildSystemPrompt('/w', '/w', WORKSPACE_TOOLS, true);
  assert.ok(!toolLine(prompt).includes('delegate'));
  assert.doesNotMatch(prompt, /Use delegate/);
});

// AGENTS.md is read like any tool reads a workspace file: a symlink out of the workspace used to send the
// target (a key file, /etc/shadow) to the model, and a named pipe blocked the whole server in readFileSync.
test('AGENTS.md is read only as a regular file inside the workspace: a symlink out or a named pipe is left out', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'svc-prompt-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const ws = join(base, 'ws');
  mkdirSync(ws);
  writeFileSync(join(base, 'secret.txt'), 'the private key\n');
  symlinkSync('../secret.txt', join(ws, 'AGENTS.md'));
  assert.doesNotMatch(await buildSystemPrompt(ws, ws, WORKSPACE_TOOLS, false), /private key|AGENTS\.md/);
  rmSync(join(ws, 'AGENTS.md'));
  execFileSync('mkfifo', [join(ws, 'AGENTS.md')]);
  assert.doesNotMatch(await buildSystemPrompt(ws, ws, WORKSPACE_TOOLS, false), /AGENTS\.md/);
  rmSync(join(ws, 'AGENTS.md'));
  mkdirSync(join(ws, 'docs'));
  writeFileSync(join(ws, 'docs', 'agents.md'), 'Inside link works.\n');
  symlinkSync('docs/agents.md', join(ws, 'AGENTS.md'));
  assert.match(await buildSystemPrompt(ws, ws, WORKSPACE_TOOLS, false), /Inside link works\./);
});

test('AGENTS.md over 32 KiB is cut with a note', async (t) => {
  const ws = mkdtempSync(join(tmpdir(), 'svc-prompt-'));
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  writeFileSync(join(ws, 'AGENTS.md'), 'a'.repeat(40 * 1024));
  const prompt = await buildSystemPrompt(ws, ws, WORKSPACE_TOOLS, false);
  assert.equal(prompt.split('a'.repeat(1024)).length - 1 >= 31, true);
  assert.match(prompt, /\[AGENTS\.md was cut at 32768 bytes\]/);
  // no run of 32,769 a's (the regex a{32769} says the same but backtracks for ~3 s of CPU)
  assert.ok(!prompt.includes('a'.repeat(32 * 1024 + 1)));
});
