import { defineCommand } from 'citty';
import { readEnv } from '../../config/env.ts';
import { DEFAULT_DB_PATH_HELP, resolveStoreTarget } from '../../config/paths.ts';
import { formatSummaryLines, sqliteFileOf } from '../../store/backup.ts';
import { restoreStore } from '../../store/restore.ts';
import { invokedUnderGateway } from '../scope.ts';
import { databaseUrlArg, requireFilePath, storeFlagsOf } from '../store-flags.ts';

export default defineCommand({
  meta: { name: 'restore', description: 'Replace the trace store with a verified backup' },
  args: {
    backup_file: { type: 'positional', required: true, description: 'Backup file written by svc backup' },
    'db-path': {
      type: 'string',
      description: `Trace store path (default SVC_GATEWAY_DB_PATH under svc gateway, then SVC_DB_PATH, else ${DEFAULT_DB_PATH_HELP})`,
    },
    ...databaseUrlArg,
    force: { type: 'boolean', description: 'Replace an existing store' },
  },
  async run({ args }) {
    const scope = invokedUnderGateway() ? 'gateway' : 'any';
    const target = resolveStoreTarget(readEnv(), storeFlagsOf(args), scope);
    const dbPath = sqliteFileOf(
      target,
      'restore',
      args['database-url'] === undefined ? 'SVC_DATABASE_URL' : '--database-url',
    );
    const backup = requireFilePath(args.backup_file, 'BACKUP_FILE', '', 'standard input');
    const r = await restoreStore({
      backup,
      dbPath,
      force: args.force === true,
      busyTimeoutMs: target.engine === 'sqlite' ? target.busyTimeoutMs : undefined,
    });
    const lines = formatSummaryLines([
      ['backup', r.backup],
      ['destination', r.destination],
      ['replaced_existing', r.replaced ? 'yes' : 'no'],
      ['bytes', r.bytes],
      ['schema_version', r.schemaVersion],
      ['events', r.events],
      ['oldest_event', r.oldestEvent],
      ['newest_event', r.newestEvent],
    ]);
    process.stdout.write(`${lines}\n`);
  },
});
