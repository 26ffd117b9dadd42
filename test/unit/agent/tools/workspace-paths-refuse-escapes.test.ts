import assert from 'node:assert/strict';
import { mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { WORKSPACE_TOOLS } from '#src/agent/tools/registry.ts';
import type { ToolName } from '#src/agent/tools/tool.ts';
import { failure, okOutput, workspace } from './tools-fixture.ts';

const tool = (name: ToolName) => WORKSPACE_TOOLS.find((t) => t.name === name)!;

/** One call per path-taking tool, with `p` as its path. */
const CALLS: [ToolName, (p: string) => Record<string, unknown>][] = [
  ['read_file', (p) => ({ path: p })],
  ['list_files', (p) => ({ path: p })],
  ['search_files', (p) => ({ pattern: 'root', path: p })],
  ['write_file', (p) => ({ path: `${p}/new.txt`, content: 'x' })],
  ['edit_file', (p) => ({ path: p, old_string: 'root', new_string: 'toor' })],
];

test('../ paths are refused with outside_workspace by every path-taking tool', async (t) => {
  const { ctx, outside } = await workspace(t);
  await writeFile(path.join(outside, 'secret.txt'), 'root secret');
  for (const [name, input] of CALLS) {
    const res = failure(await tool(name).run(input('../outside/secret.txt'), ctx));
    assert.equal(res.error_class, 'outside_workspace', name);
  }
  assert.equal(await readFile(path.join(outside, 'secret.txt'), 'utf8'), 'root secret');
});

test('absolute paths elsewhere (/etc/passwd, /etc) are refused; absolute paths inside work', async (t) => {
  const { ctx, dir } = await workspace(t, { 'a.txt': 'inside root' });
  for (const [name, input] of CALLS) {
    const res = failure(await tool(name).run(input('/etc/passwd'), ctx));
    assert.equal(res.error_class, 'outside_workspace', name);
  }
  assert.equal(failure(await tool('list_files').run({ path: '/etc' }, ctx)).error_class, 'outside_workspace');
  assert.equal(okOutput(await tool('read_file').run({ path: path.join(dir, 'a.txt') }, ctx)), 'inside root');
});

test('a symlink inside the workspace that leads to /etc is refused', async (t) => {
  const { ctx, dir } = await workspace(t);
  await symlink('/etc', path.join(dir, 'etc-link'));
  for (const [name, input] of CALLS) {
    const p = name === 'list_files' || name === 'write_file' ? 'etc-link' : 'etc-link/passwd';
    assert.equal(failure(await tool(name).run(input(p), ctx)).error_class, 'outside_workspace', name);
  }
});

test('a symlink inside the workspace to a file inside it is followed', async (t) => {
  const { ctx, dir } = await workspace(t, { 'real.txt': 'the real one' });
  await symlink('real.txt', path.join(dir, 'alias.txt'));
  assert.equal(okOutput(await tool('read_file').run({ path: 'alias.txt' }, ctx)), 'the real one');
});

test('a directory swapped for a symlink out after a first successful call is refused on the next call', async (t) => {
  const { ctx, dir, outside } = await workspace(t, { 'sub/f.txt': 'root inside' });
  await writeFile(path.join(outside, 'f.txt'), 'root outside');
  for (const [name, input] of CALLS) {
    const p = name === 'list_files' || name === 'search_files' || name === 'write_file' ? 'sub' : 'sub/f.txt';
    okOutput(await tool(name).run(input(p), ctx));
  }
  await rename(path.join(dir, 'sub'), path.join(dir, 'sub-old'));
  await symlink(outside, path.join(dir, 'sub'));
  for (const [name, input] of CALLS) {
    const p = name === 'list_files' || name === 'search_files' || name === 'write_file' ? 'sub' : 'sub/f.txt';
    assert.equal(failure(await tool(name).run(input(p), ctx)).error_class, 'outside_workspace', name);
  }
  assert.equal(await readFile(path.join(outside, 'f.txt'), 'utf8'), 'root outside');
  await assert.rejects(readFile(path.join(outside, 'new.txt')));
});

test('write_file refuses a dangling symlink that points out (the target would be created outside)', async (t) => {
  const { ctx, dir, outside } = await workspace(t);
  await symlink(path.join(outside, 'planted.txt'), path.join(dir, 'planted.txt'));
  const res = failure(await tool('write_file').run({ path: 'planted.txt', content: 'x' }, ctx));
  assert.equal(res.error_class, 'outside_workspace');
  await assert.rejects(readFile(path.join(outside, 'planted.txt')));
});

test('a missing parent chain below the workspace is fine; one below a link out is not', async (t) => {
  const { ctx, dir, outside } = await workspace(t);
  okOutput(await tool('write_file').run({ path: 'a/b/c.txt', content: 'deep' }, ctx));
  assert.equal(await readFile(path.join(dir, 'a/b/c.txt'), 'utf8'), 'deep');
  await mkdir(path.join(outside, 'x'));
  await symlink(path.join(outside, 'x'), path.join(dir, 'x'));
  const res = failure(await tool('write_file').run({ path: 'x/y/z.txt', content: 'no' }, ctx));
  assert.equal(res.error_class, 'outside_workspace');
  await assert.rejects(readFile(path.join(outside, 'x/y/z.txt')));
});

test('a path through a dangling symlink that points out is outside_workspace for every tool; one that stays inside is followed', async (t) => {
  const { ctx, dir, outside } = await workspace(t);
  await symlink(path.join(outside, 'not-yet'), path.join(dir, 'away'));
  for (const [name, input] of [
    ['write_file', { path: 'away/new/file.txt', content: 'x' }],
    ['read_file', { path: 'away/file.txt' }],
    ['list_files', { path: 'away/sub' }],
    ['search_files', { pattern: 'x', path: 'away/sub' }],
    ['edit_file', { path: 'away/file.txt', old_string: 'a', new_string: 'b' }],
  ] as const) {
    const res = failure(await tool(name).run(input, ctx));
    assert.equal(res.error_class, 'outside_workspace', `${name}: ${res.message}`);
  }
  await assert.rejects(readFile(path.join(outside, 'not-yet/new/file.txt')));
  // a dangling link to a place inside: writing through it creates its target there
  await symlink('notes.md', path.join(dir, 'link.md'));
  okOutput(await tool('write_file').run({ path: 'link.md', content: 'inside' }, ctx));
  assert.equal(await readFile(path.join(dir, 'notes.md'), 'utf8'), 'inside');
});

test('a dangling link with a relative target, inside a directory reached through a link out, is outside', async (t) => {
  const { ctx, dir, outside } = await workspace(t);
  await mkdir(path.join(outside, 'deep/dir'), { recursive: true });
  await symlink('../gone', path.join(outside, 'deep/dir/rel')); // points at outside/deep/gone
  await symlink(path.join(outside, 'deep/dir'), path.join(dir, 'via'));
  const res = failure(await tool('write_file').run({ path: 'via/rel', content: 'x' }, ctx));
  assert.equal(res.error_class, 'outside_workspace');
  await assert.rejects(readFile(path.join(dir, 'gone')));
});
