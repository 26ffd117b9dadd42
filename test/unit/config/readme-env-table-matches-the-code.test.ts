/**
 * The README's "Environment variables" table against src/config/env.ts, the only reader of process.env: every
 * variable the code reads has a row (HOME and XDG_CONFIG_HOME may be named in another row's text), every row
 * names only variables the code reads, and a command that reads a variable itself is in the row's "Used by".
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../helpers/svc.ts';

const envSource = readFileSync(join(ROOT, 'src/config/env.ts'), 'utf8');
/** field of SvcEnv → the variable it reads (`field: get('NAME')`, or its parse: `field: parse(get('NAME'))`) */
const fields = new Map(
  [...envSource.matchAll(/^\s+(\w+): (?:\w+\()?get\('([A-Z0-9_]+)'\)/gm)].map((m) => [m[1], m[2]] as const),
);
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const section = /\n## Environment variables\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? '';
/** variable → its row's "Used by" cell */
const usedBy = new Map<string, string>();
for (const line of section.split('\n')) {
  const cells = line.split('|').map((c) => c.trim());
  if (cells.length < 4 || !cells[1].startsWith('`')) continue;
  for (const m of cells[1].matchAll(/`([A-Z][A-Z0-9_]+)`/g)) usedBy.set(m[1], cells[2]);
}

test('every variable svc reads has a row, and every row names a variable svc reads', () => {
  assert.ok(fields.size > 30 && usedBy.size > 30, 'both lists were read');
  const read = new Set(fields.values());
  for (const name of read) {
    if (name === 'HOME') continue; // the `~` of every default path
    if (name === 'XDG_CONFIG_HOME') assert.ok(section.includes(name), name);
    else assert.ok(usedBy.has(name), `${name} is read by src/config/env.ts but has no README row`);
  }
  for (const name of usedBy.keys())
    assert.ok(read.has(name), `${name} has a README row but svc never reads it`);
});

test('a command that reads a variable itself is named in its row’s "Used by"', () => {
  const commandsDir = join(ROOT, 'src/cli/commands');
  const files = (readdirSync(commandsDir, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
  let checked = 0;
  for (const file of files) {
    const text = readFileSync(join(commandsDir, file), 'utf8');
    const command = commandOf(relative(commandsDir, join(commandsDir, file)));
    for (const [field, name] of fields) {
      if (!new RegExp(`\\benv\\.${field}\\b`).test(text)) continue;
      const cell = usedBy.get(name);
      if (cell === undefined) continue; // the first test names it
      checked++;
      const ok =
        cell.includes('every command') ||
        cell.includes(`\`${command}\``) ||
        cell.includes(`\`${command} `) ||
        (command === 'svc gateway' && cell.includes('gateway commands'));
      assert.ok(ok, `${name}: read by ${command} (src/cli/commands/${file}), but "Used by" says ${cell}`);
    }
  }
  assert.ok(checked >= 8, `${checked} reads checked`);
});

// --- internal ---

/**
 * src/cli/commands/<path> → the command it implements: chat.ts → svc chat, routing/explain.ts → svc routing
 * explain, serve-start.ts (the run of serve.ts, loaded apart) → svc serve.
 */
function commandOf(path: string): string {
  const parts = path.replace(/(-start)?\.ts$/, '').split('/');
  if (parts[0] === 'gateway' || parts[0] === 'analytics' || parts[0] === 'user') return `svc ${parts[0]}`;
  const words = parts.filter((p) => p !== 'index' && p !== 'common');
  return `svc ${words.join(' ')}`;
}
