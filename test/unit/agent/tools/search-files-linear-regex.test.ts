import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { SEARCH_CAP_BYTES, searchFilesTool } from '#src/agent/tools/search-files.ts';
import { failure, okOutput, workspace } from './tools-fixture.ts';

const search = searchFilesTool.run;

test('search_files prints file:line: text for each matching line, in path order', async (t) => {
  const { ctx } = await workspace(t, {
    'src/a.ts': 'const alpha = 1;\nlet beta = 2;\nconst gamma = 3;\n',
    'src/deep/b.md': 'no match\nconst in markdown\r\n',
    'top.ts': 'nothing here\n',
  });
  assert.equal(
    okOutput(await search({ pattern: '^const \\w+' }, ctx)),
    'src/a.ts:1: const alpha = 1;\nsrc/a.ts:3: const gamma = 3;\nsrc/deep/b.md:2: const in markdown',
  );
  assert.equal(okOutput(await search({ pattern: 'zzz' }, ctx)), 'no matches');
});

test('a pattern matching an empty line finds the real blank lines, not one past a final newline', async (t) => {
  const { ctx } = await workspace(t, { 'a.txt': 'one\n\ntwo\n', 'b.txt': 'no final newline', 'c.txt': '' });
  // as grep: an empty file has no lines, and the newline that ends the last line starts none
  assert.equal(okOutput(await search({ pattern: '^$' }, ctx)), 'a.txt:2: ');
});

test('search_files narrows by path (directory or file) and by glob', async (t) => {
  const { ctx } = await workspace(t, {
    'src/a.ts': 'hit\n',
    'src/deep/b.ts': 'hit\n',
    'src/deep/c.md': 'hit\n',
    'docs/d.ts': 'hit\n',
  });
  assert.equal(
    okOutput(await search({ pattern: 'hit', glob: '*.ts' }, ctx)),
    'docs/d.ts:1: hit\nsrc/a.ts:1: hit\nsrc/deep/b.ts:1: hit',
  );
  assert.equal(
    okOutput(await search({ pattern: 'hit', path: 'src/deep' }, ctx)),
    'src/deep/b.ts:1: hit\nsrc/deep/c.md:1: hit',
  );
  assert.equal(okOutput(await search({ pattern: 'hit', path: 'src/a.ts' }, ctx)), 'src/a.ts:1: hit');
  assert.equal(
    okOutput(await search({ pattern: 'hit', path: 'src', glob: 'deep/**/*.md' }, ctx)),
    'src/deep/c.md:1: hit',
  );
});

test('search_files skips .git, node_modules and binary files', async (t) => {
  const { ctx, dir } = await workspace(t, {
    '.git/config': 'needle\n',
    'node_modules/p/i.js': 'needle\n',
    'keep.txt': 'needle\n',
  });
  await writeFile(
    path.join(dir, 'blob.bin'),
    Buffer.concat([Buffer.from('needle\n'), Buffer.from([0, 1, 2])]),
  );
  assert.equal(okOutput(await search({ pattern: 'needle' }, ctx)), 'keep.txt:1: needle');
});

test('a pathological regex like (a+)+$ on a long line finishes (RE2: linear matching)', async (t) => {
  const { ctx } = await workspace(t, { 'long.txt': `${'a'.repeat(100_000)}!\n${'a'.repeat(30)}\n` });
  assert.equal(okOutput(await search({ pattern: '(a+)+$' }, ctx)), `long.txt:2: ${'a'.repeat(30)}`);
});

test('search_files: an invalid or non-RE2 pattern is invalid_input naming `pattern`; missing path is not_found', async (t) => {
  const { ctx } = await workspace(t, { 'a.txt': 'x\n' });
  for (const pattern of ['(unclosed', '(?<=look)behind', '']) {
    const res = failure(await search({ pattern }, ctx));
    assert.equal(res.error_class, 'invalid_input', pattern);
    assert.match(res.message, /`pattern`/);
  }
  assert.equal(failure(await search({ pattern: 'x', path: 'nope' }, ctx)).error_class, 'not_found');
});

test('search_files caps its output at 64 KiB with a note', async (t) => {
  const { ctx } = await workspace(t, { 'many.txt': 'match this line please\n'.repeat(10_000) });
  const res = await search({ pattern: 'match' }, ctx);
  assert.equal(res.ok && res.truncated, true);
  const out = okOutput(res);
  assert.match(out, /\[search output cut at 64 KiB; narrow the pattern, path or glob\]$/);
  assert.ok(Buffer.byteLength(out) <= SEARCH_CAP_BYTES + 200);
});
