import assert from 'node:assert/strict';
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { LIST_CAP_BYTES, listFilesTool } from '#src/agent/tools/list-files.ts';
import { READ_CAP_BYTES, readFileTool } from '#src/agent/tools/read-file.ts';
import { failure, okOutput, workspace } from './tools-fixture.ts';

test('read_file returns the file byte for byte, or the lines from offset for limit lines', async (t) => {
  const { ctx } = await workspace(t, { 'src/a.txt': 'one\ntwo\r\nthree\nfour' });
  assert.equal(okOutput(await readFileTool.run({ path: 'src/a.txt' }, ctx)), 'one\ntwo\r\nthree\nfour');
  assert.equal(
    okOutput(await readFileTool.run({ path: 'src/a.txt', offset: 2, limit: 2 }, ctx)),
    'two\r\nthree\n',
  );
  assert.equal(okOutput(await readFileTool.run({ path: 'src/a.txt', offset: 4 }, ctx)), 'four');
  assert.equal(okOutput(await readFileTool.run({ path: 'src/a.txt', limit: 1 }, ctx)), 'one\n');
  assert.match(
    okOutput(await readFileTool.run({ path: 'src/a.txt', offset: 9 }, ctx)),
    /no lines from line 9/,
  );
});

test('read_file: missing file is not_found, a directory is invalid_input, bad fields are named', async (t) => {
  const { ctx } = await workspace(t, { 'd/x.txt': 'x' });
  assert.equal(failure(await readFileTool.run({ path: 'nope.txt' }, ctx)).error_class, 'not_found');
  assert.equal(failure(await readFileTool.run({ path: 'd/x.txt/y' }, ctx)).error_class, 'not_found');
  const dir = failure(await readFileTool.run({ path: 'd' }, ctx));
  assert.equal(dir.error_class, 'invalid_input');
  assert.match(dir.message, /directory/);
  const noPath = failure(await readFileTool.run({}, ctx));
  assert.equal(noPath.error_class, 'invalid_input');
  assert.match(noPath.message, /`path`/);
  const badOffset = failure(await readFileTool.run({ path: 'd/x.txt', offset: 0 }, ctx));
  assert.match(badOffset.message, /`offset`/);
  assert.match(failure(await readFileTool.run({ path: 'd/x.txt', limit: 'ten' }, ctx)).message, /`limit`/);
});

test('read_file: an unreadable file is permission_denied', async (t) => {
  if (process.getuid?.() === 0) return t.skip('root reads everything');
  const { ctx, dir } = await workspace(t, { 'locked.txt': 'x' });
  await chmod(path.join(dir, 'locked.txt'), 0o000);
  assert.equal(failure(await readFileTool.run({ path: 'locked.txt' }, ctx)).error_class, 'permission_denied');
});

test('read_file cuts output at 256 KiB and tells the model so', async (t) => {
  const line = `${'x'.repeat(99)}\n`;
  const { ctx } = await workspace(t, { 'big.txt': line.repeat(5000) });
  const res = await readFileTool.run({ path: 'big.txt' }, ctx);
  assert.equal(res.ok && res.truncated, true);
  const out = okOutput(res);
  assert.match(out, /\[file output cut at 256 KiB; read the rest with offset and limit\]$/);
  assert.equal(out.indexOf('\n[file output cut'), READ_CAP_BYTES);
  const tail = okOutput(await readFileTool.run({ path: 'big.txt', offset: 4999 }, ctx));
  assert.equal(tail, line.repeat(2));
});

test('read_file reports a binary file by size instead of its bytes', async (t) => {
  const { ctx, dir } = await workspace(t);
  await writeFile(path.join(dir, 'blob.bin'), Buffer.from([0x89, 0x50, 0, 0, 1, 2]));
  assert.equal(
    okOutput(await readFileTool.run({ path: 'blob.bin' }, ctx)),
    '(blob.bin is a binary file of 6 bytes; not shown)',
  );
});

test('list_files lists one level by default and the tree with recursive, without entering .git/node_modules', async (t) => {
  const { ctx, dir } = await workspace(t, {
    'b.txt': '',
    'src/a.ts': '',
    'src/deep/c.ts': '',
    '.git/HEAD': '',
    'node_modules/pkg/index.js': '',
  });
  await symlink('src', path.join(dir, 'link'));
  assert.equal(okOutput(await listFilesTool.run({}, ctx)), '.git/\nb.txt\nlink@\nnode_modules/\nsrc/');
  assert.equal(
    okOutput(await listFilesTool.run({ recursive: true }, ctx)),
    '.git/\nb.txt\nlink@\nnode_modules/\nsrc/\nsrc/a.ts\nsrc/deep/\nsrc/deep/c.ts',
  );
  assert.equal(okOutput(await listFilesTool.run({ path: 'src/deep' }, ctx)), 'src/deep/c.ts');
  await mkdir(path.join(dir, 'empty'));
  assert.equal(okOutput(await listFilesTool.run({ path: 'empty' }, ctx)), '(empty is empty)');
});

test('list_files: missing dir is not_found, a file is invalid_input, a bad field is named', async (t) => {
  const { ctx } = await workspace(t, { 'f.txt': '' });
  assert.equal(failure(await listFilesTool.run({ path: 'nope' }, ctx)).error_class, 'not_found');
  assert.equal(failure(await listFilesTool.run({ path: 'f.txt' }, ctx)).error_class, 'invalid_input');
  assert.match(failure(await listFilesTool.run({ recursive: 'yes' }, ctx)).message, /`recursive`/);
});

test('list_files caps a long listing at 64 KiB with a note', async (t) => {
  const { ctx, dir } = await workspace(t);
  await mkdir(path.join(dir, 'many'));
  for (let i = 0; i < 2500; i++)
    await writeFile(path.join(dir, 'many', `file-with-a-long-name-${i}.txt`), '');
  const res = await listFilesTool.run({ recursive: true }, ctx);
  assert.equal(res.ok && res.truncated, true);
  const out = okOutput(res);
  assert.match(out, /\[listing cut at 64 KiB; list a subdirectory or list without recursive\]$/);
  assert.ok(Buffer.byteLength(out) <= LIST_CAP_BYTES + 200);
});
