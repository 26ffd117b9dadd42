import { defineCommand } from 'citty';
import { notImplemented } from '../../not-implemented.ts';

export default defineCommand({
  meta: { name: 'user', description: 'Per-user data operations (forget)' },
  subCommands: {
    forget: defineCommand({
      meta: { name: 'forget', description: "Pseudonymise a user's id in every stored event" },
      args: {
        user_id: { type: 'positional', description: 'User id (^[A-Za-z0-9_-]{1,200}$)' },
        confirm: { type: 'boolean', description: 'Required: confirm the rewrite' },
        'db-path': { type: 'string', description: 'Trace store path' },
      },
      run() {
        notImplemented('svc user forget');
      },
    }),
  },
});
