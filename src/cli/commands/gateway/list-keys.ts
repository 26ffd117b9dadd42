import { defineCommand } from 'citty';
import { type ListedKey, runListKeys } from '../../../gateway/key-admin.ts';
import { SvcError } from '../../../lib/errors.ts';
import { keystoreArgs, withKeyAdmin } from './common.ts';

export default defineCommand({
  meta: { name: 'list-keys', description: 'List gateway keys with their on-disk and effective status' },
  args: {
    format: { type: 'string', description: 'table (default) or json' },
    ...keystoreArgs,
  },
  async run({ args }) {
    const format = args.format ?? 'table';
    if (format !== 'table' && format !== 'json') {
      throw new SvcError('usage_error', { message: `--format must be table or json, not "${format}".` });
    }
    const keys = await withKeyAdmin(args, runListKeys);
    process.stdout.write(format === 'json' ? `${JSON.stringify({ keys }, null, 2)}\n` : renderTable(keys));
  },
});

// --- internal ---

const COLUMNS: Array<[string, (k: ListedKey) => string | null | undefined]> = [
  ['KEY_ID', (k) => k.key_id],
  ['NAME', (k) => k.name],
  ['STATUS', (k) => k.status],
  ['EFFECTIVE_STATUS', (k) => k.effective_status],
  ['USER', (k) => k.user_id],
  ['TEAM', (k) => k.team_id],
  ['WORKSPACE', (k) => k.workspace_path],
  ['CREATED_AT', (k) => k.created_at],
  ['GRACE_PERIOD_UNTIL', (k) => k.grace_period_until],
  ['REVOKED_AT', (k) => k.revoked_at],
];

function renderTable(keys: ListedKey[]): string {
  const rows = [COLUMNS.map(([h]) => h), ...keys.map((k) => COLUMNS.map(([, get]) => oneLine(get(k))))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map(
      (r) =>
        `${r
          .map((cell, i) => cell.padEnd(widths[i]))
          .join('  ')
          .trimEnd()}\n`,
    )
    .join('');
}

function oneLine(value: string | null | undefined): string {
  return value ? value.replace(/\s+/g, ' ') : '-';
}
