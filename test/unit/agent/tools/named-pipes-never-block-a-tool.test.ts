import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { WORKSPACE_TOOLS } from '#src/agent/tools/registry.ts';
import type { ToolName } from '#src/agent/tools/tool.ts';
import { failure, okOutput, workspace } from './tools-fixture.ts';

const tool = (name: ToolName) => WORKSPACE_TOOLS.find((t) => t.name === name)!;

// A FIFO with no writer blocks open(O_RDONLY) and one with no reader blocks open(O_WRONLY) forever: the
// turn could not end, not even on cancel, and the blocked libuv thread kept svc serve from exiting.
test('a named pipe in the workspace is refused as not a regular file by every file tool, without blocking', async (t) => {
  const { ctx, dir } = await workspace(t, { 'a.txt': 'pipe here' });
  execFileSync('mkfifo', [path.join(dir, 'pipe')]);
  const calls: [ToolName, Record<string, unknown>][] = [
    ['read_file', { path: 'pipe' }],
    ['read_file', { path: 'pipe', offset: 2, limit: 1 }],
    ['write_file', { path: 'pipe', content: 'x' }],
    ['edit_file', { path: 'pipe', old_string: 'a', new_string: 'b' }],
    ['search_files', { pattern: 'a', path: 'pipe' }],
  ];
  for (const [name, input] of calls) {
    const res = failure(await tool(name).run(input, ctx));
    assert.equal(res.error_class, 'invalid_input', name);
    assert.match(res.message, /pipe is not a regular file/, name);
  }
  // a walk lists the pipe and a search of the folder passes it over
  assert.match(okOutput(await tool('list_files').run({}, ctx)), /pipe/);
  assert.equal(okOutput(await tool('search_files').run({ pattern: 'pipe' }, ctx)), 'a.txt:1: pipe here');
});
