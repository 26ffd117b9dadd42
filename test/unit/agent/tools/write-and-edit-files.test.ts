import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { editFileTool } from '#src/agent/tools/edit-file.ts';
import { writeFileTool } from '#src/agent/tools/write-file.ts';
import { failure, okOutput, workspace } from './tools-fixture.ts';

test('write_file creates a file with its parent directories, then overwrites it', async (t) => {
  const { ctx, dir } = await workspace(t);
  assert.equal(
    okOutput(await writeFileTool.run({ path: 'a/b/new.txt', content: 'héllo' }, ctx)),
    'created a/b/new.txt (6 bytes)',
  );
  assert.equal(await readFile(path.join(dir, 'a/b/new.txt'), 'utf8'), 'héllo');
  assert.equal(
    okOutput(await writeFileTool.run({ path: 'a/b/new.txt', content: '' }, ctx)),
    'overwrote a/b/new.txt (0 bytes)',
  );
  assert.equal(await readFile(path.join(dir, 'a/b/new.txt'), 'utf8'), '');
  assert.equal(writeFileTool.needsConfirmation, true);
});

test('write_file: a directory target and bad fields are invalid_input; a file as parent is not_found', async (t) => {
  const { ctx } = await workspace(t, { 'd/f.txt': 'x' });
  assert.equal(
    failure(await writeFileTool.run({ path: 'd', content: 'x' }, ctx)).error_class,
    'invalid_input',
  );
  assert.equal(
    failure(await writeFileTool.run({ path: '.', content: 'x' }, ctx)).error_class,
    'invalid_input',
  );
  assert.match(failure(await writeFileTool.run({ path: 'x.txt' }, ctx)).message, /`content`/);
  assert.match(failure(await writeFileTool.run({ path: 3, content: '' }, ctx)).message, /`path`/);
  assert.equal(
    failure(await writeFileTool.run({ path: 'd/f.txt/g.txt', content: 'x' }, ctx)).error_class,
    'not_found',
  );
});

test('edit_file replaces a unique exact match', async (t) => {
  const { ctx, dir } = await workspace(t, { 'a.ts': 'const a = 1;\nconst b = $1;\n' });
  const out = okOutput(
    await editFileTool.run({ path: 'a.ts', old_string: 'b = $1', new_string: "b = '$&'" }, ctx),
  );
  assert.equal(out, 'replaced 1 occurrence in a.ts');
  assert.equal(await readFile(path.join(dir, 'a.ts'), 'utf8'), "const a = 1;\nconst b = '$&';\n");
  assert.equal(editFileTool.needsConfirmation, true);
});

test('edit_file refuses 0 matches (not found) and >1 matches (with the count) unless replace_all', async (t) => {
  const { ctx, dir } = await workspace(t, { 'a.txt': 'x y x z x' });
  const none = failure(await editFileTool.run({ path: 'a.txt', old_string: 'q', new_string: 'r' }, ctx));
  assert.equal(none.error_class, 'invalid_input');
  assert.match(none.message, /not found/);
  const many = failure(await editFileTool.run({ path: 'a.txt', old_string: 'x', new_string: 'w' }, ctx));
  assert.equal(many.error_class, 'invalid_input');
  assert.match(many.message, /occurs 3 times/);
  assert.equal(await readFile(path.join(dir, 'a.txt'), 'utf8'), 'x y x z x');
  const all = okOutput(
    await editFileTool.run({ path: 'a.txt', old_string: 'x', new_string: 'w', replace_all: true }, ctx),
  );
  assert.equal(all, 'replaced 3 occurrences in a.txt');
  assert.equal(await readFile(path.join(dir, 'a.txt'), 'utf8'), 'w y w z w');
});

test('edit_file: missing file is not_found, a directory or bad fields are invalid_input', async (t) => {
  const { ctx } = await workspace(t, { 'd/a.txt': 'x' });
  assert.equal(
    failure(await editFileTool.run({ path: 'no.txt', old_string: 'a', new_string: 'b' }, ctx)).error_class,
    'not_found',
  );
  assert.equal(
    failure(await editFileTool.run({ path: 'd', old_string: 'a', new_string: 'b' }, ctx)).error_class,
    'invalid_input',
  );
  assert.match(
    failure(await editFileTool.run({ path: 'd/a.txt', old_string: '', new_string: 'b' }, ctx)).message,
    /`old_string`/,
  );
  assert.match(
    failure(await editFileTool.run({ path: 'd/a.txt', old_string: 'x' }, ctx)).message,
    /`new_string`/,
  );
  assert.match(
    failure(
      await editFileTool.run({ path: 'd/a.txt', old_string: 'x', new_string: 'y', replace_all: 1 }, ctx),
    ).message,
    /`replace_all`/,
  );
});

// edit_file decoded the file as UTF-8 and wrote the text back: every byte that is not UTF-8 (a Latin-1 é, a
// binary blob) came back as U+FFFD, so a one-line edit silently rewrote the rest of the file.
test('edit_file changes only the bytes it replaces: a Latin-1 file keeps its other bytes', async (t) => {
  const { ctx, dir } = await workspace(t);
  const { writeFile } = await import('node:fs/promises');
  const latin1 = Buffer.from('caf\xe9 = 1\nversion = 1\nna\xefve\n', 'latin1');
  await writeFile(path.join(dir, 'legacy.cfg'), latin1);
  assert.equal(
    okOutput(
      await editFileTool.run(
        { path: 'legacy.cfg', old_string: 'version = 1', new_string: 'version = 2' },
        ctx,
      ),
    ),
    'replaced 1 occurrence in legacy.cfg',
  );
  assert.deepEqual(
    await readFile(path.join(dir, 'legacy.cfg')),
    Buffer.from('caf\xe9 = 1\nversion = 2\nna\xefve\n', 'latin1'),
  );
  const blob = Buffer.from([0x00, 0xff, 0x41, 0xfe, 0x41, 0x80]);
  await writeFile(path.join(dir, 'blob.bin'), blob);
  okOutput(
    await editFileTool.run({ path: 'blob.bin', old_string: 'A', new_string: 'é', replace_all: true }, ctx),
  );
  assert.deepEqual(
    await readFile(path.join(dir, 'blob.bin')),
    Buffer.from([0x00, 0xff, 0xc3, 0xa9, 0xfe, 0xc3, 0xa9, 0x80]),
  );
});
