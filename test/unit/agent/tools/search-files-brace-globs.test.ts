import assert from 'node:assert/strict';
import { test } from 'node:test';
import { searchFilesTool } from '#src/agent/tools/search-files.ts';
import { okOutput, workspace } from './tools-fixture.ts';

// Models write the globs of ripgrep and of their own tools ("*.{ts,tsx}"); braces used to be literal
// characters, so such a search answered "no matches" for files that match.
test('a glob with {a,b} alternatives matches each of them, nested and beside a path', async (t) => {
  const { ctx } = await workspace(t, {
    'a.ts': 'needle',
    'b.tsx': 'needle',
    'c.md': 'needle',
    'src/d.ts': 'needle',
    'lib/e.ts': 'needle',
    'docs/f.md': 'needle',
  });
  const files = async (glob: string) =>
    okOutput(await searchFilesTool.run({ pattern: 'needle', glob }, ctx))
      .split('\n')
      .map((l) => l.split(':')[0]);
  assert.deepEqual(await files('*.{ts,tsx}'), ['a.ts', 'b.tsx', 'lib/e.ts', 'src/d.ts']);
  assert.deepEqual(await files('{src,lib}/*.ts'), ['lib/e.ts', 'src/d.ts']);
  assert.deepEqual(await files('**/*.{md,t{s,sx}}'), [
    'a.ts',
    'b.tsx',
    'c.md',
    'docs/f.md',
    'lib/e.ts',
    'src/d.ts',
  ]);
  assert.deepEqual(await files('{a}.ts'), ['a.ts']); // one alternative: still the braces' content
  assert.equal(
    okOutput(await searchFilesTool.run({ pattern: 'needle', glob: '*.{rs,go}' }, ctx)),
    'no matches',
  );
});
