import { defineCommand } from 'citty';
import { readEnv } from '../../config/env.ts';
import { DEFAULT_DB_PATH_HELP, resolveStoreTarget } from '../../config/paths.ts';
import { backupStore, formatSummaryLines, sqliteFileOf } from '../../store/backup.ts';
import { invokedUnderGateway } from '../scope.ts';
import { databaseUrlArg, requireFilePath, storeFlagsOf } from '../store-flags.ts';

export default defineCommand({
  meta: { name: 'backup', description: 'Take a hot, WAL-safe single-file snapshot of the trace store' },
  args: {
    dest_file: { type: 'positional', required: true, description: 'Destination file (must not exist)' },
    'db-path': {
      type: 'string',
      description: `Trace store path (default SVC_GATEWAY_DB_PATH under svc gateway, then SVC_DB_PATH, else ${DEFAULT_DB_PATH_HELP})`,
    },
    ...databaseUrlArg,
  },
  async run({ args }) {
    const scope = invokedUnderGateway() ? 'gateway' : 'any';
    const target = resolveStoreTarget(readEnv(), storeFlagsOf(args), scope);
    const source = sqliteFileOf(
      target,
      'backup',
      args['database-url'] === undefined ? 'SVC_DATABASE_URL' : '--database-url',
    );
    const dest = requireFilePath(args.dest_file, 'DEST_FILE', '', 'standard output');
    const r = await backupStore(source, dest, target.engine === 'sqlite' ? target.busyTimeoutMs : undefined);
    const lines = formatSummaryLines([
      ['source', r.source],
      ['destination', r.destination],
      ['bytes', r.bytes],
      ['schema_version', r.schemaVersion],
      ['events', r.events],
      ['oldest_event', r.oldestEvent],
      ['newest_event', r.newestEvent],
    ]);
    process.stdout.write(`${lines}\n`);
  },
});
