/**
 * Every test/unit/**\/*.test.ts in this one process (test/run.ts runs it as one test file): one Node start
 * and one load of the src/ modules the unit files import, instead of one per file, costs about half the
 * CPU. Each file is a suite named by its path, so its top-level before/after hooks run around its own tests,
 * as in a process of its own, and every file is loaded before the first test runs. Run it as
 * `node --test test/unit-tests.ts`; one unit file alone still runs with `node --test <file>`.
 */
import { globSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), 'unit');
for (const file of globSync('**/*.test.ts', { cwd: root }).sort()) {
  describe(`test/unit/${file}`, async () => {
    await import(pathToFileURL(join(root, file)).href);
  });
}
