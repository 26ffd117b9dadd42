import { defineCommand } from 'citty';
import { notImplemented } from '../not-implemented.ts';

export default defineCommand({
  meta: { name: 'backup', description: 'Take a hot, WAL-safe single-file snapshot of the trace store' },
  args: {
    dest_file: { type: 'positional', description: 'Destination file (must not exist)' },
    'db-path': { type: 'string', description: 'Trace store path' },
  },
  run() {
    notImplemented('svc backup');
  },
});
