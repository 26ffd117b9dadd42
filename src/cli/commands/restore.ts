import { defineCommand } from 'citty';
import { notImplemented } from '../not-implemented.ts';

export default defineCommand({
  meta: { name: 'restore', description: 'Replace the trace store with a verified backup' },
  args: {
    backup_file: { type: 'positional', description: 'Backup file written by svc backup' },
    'db-path': { type: 'string', description: 'Trace store path' },
    force: { type: 'boolean', description: 'Replace an existing store' },
  },
  run() {
    notImplemented('svc restore');
  },
});
