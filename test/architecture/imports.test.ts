/**
 * Guards the import rules of STYLE.md: layer boundaries and no value-import cycles.
 * `import type` may cross any line, so only value imports are checked.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/svc.ts';

const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

const IMPORT_RE = /^\s*(import|export)\s+(type\s+)?([^'"]*?from\s+)?['"]([^'"]+)['"]/gm;

/** Value imports of a file, as repo-relative paths under src/. */
function valueImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT_RE)) {
    if (m[2]) continue; // import type
    const spec = m[4];
    if (!spec.startsWith('.')) continue;
    const clause = m[3] ?? '';
    // `import { type A, type B } from` is type-only too
    const names = /\{([^}]*)\}/.exec(clause)?.[1];
    if (
      names &&
      !/\*|^\s*\w+\s*,/.test(clause) &&
      names.split(',').every((n) => /^\s*type\s/.test(n) || !n.trim())
    ) {
      continue;
    }
    out.push(relative(SRC, resolve(dirname(file), spec)));
  }
  return out;
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((f) => [relative(SRC, f), valueImports(f)]));

const RULES: Array<{ from: RegExp; allowed: RegExp; why: string }> = [
  { from: /^lib\//, allowed: /^lib\//, why: 'lib/ imports nothing else from src/' },
  { from: /^config\//, allowed: /^(lib|config)\//, why: 'config/ imports only lib/' },
  { from: /^canonical\//, allowed: /^(lib|canonical)\//, why: 'canonical/ imports only lib/' },
  {
    from: /^store\/migrations\//,
    allowed: /^store\/migrations\//,
    why: 'migrations import nothing from src/',
  },
  {
    from: /^adapters\//,
    allowed: /^(lib|canonical|adapters)\//,
    why: 'adapters import only lib/ and canonical/',
  },
  {
    from: /^gateway\/shapes\//,
    allowed: /^(lib|canonical|gateway\/shapes)\//,
    why: 'shapes import only canonical/ and lib/',
  },
];

test('layer boundaries of STYLE.md hold for every value import', () => {
  const violations: string[] = [];
  for (const [file, imports] of graph) {
    for (const rule of RULES) {
      if (!rule.from.test(file)) continue;
      for (const imp of imports)
        if (!rule.allowed.test(imp)) violations.push(`${file} → ${imp}: ${rule.why}`);
    }
    for (const imp of imports) {
      if (imp.startsWith('cli/') && !file.startsWith('cli/'))
        violations.push(`${file} → ${imp}: nothing imports cli/`);
      if (imp.startsWith('metrics/') && !/^(metrics\/|cli\/|.*\/app\.ts$|.*\/server\.ts$)/.test(file)) {
        violations.push(`${file} → ${imp}: only app files import metrics/`);
      }
    }
  }
  assert.deepEqual(violations, []);
});

test('there is no value-import cycle in src/', () => {
  const state = new Map<string, 'visiting' | 'done'>();
  const cycles: string[] = [];
  const visit = (node: string, path: string[]) => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'visiting') {
      cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
      return;
    }
    state.set(node, 'visiting');
    for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
    state.set(node, 'done');
  };
  for (const node of graph.keys()) visit(node, []);
  assert.deepEqual(cycles, []);
});
