import { defineCommand } from 'citty';
import { notImplemented } from '../../not-implemented.ts';

const stub = (name: string, description: string) =>
  defineCommand({
    meta: { name, description },
    run() {
      notImplemented(`svc gateway ${name}`);
    },
  });

export default defineCommand({
  meta: { name: 'gateway', description: 'Run the LLM gateway, or manage its keys and trace store' },
  args: {
    port: { type: 'string', description: 'Port on 127.0.0.1 (default 8422, or SVC_GATEWAY_PORT)' },
    host: { type: 'string', description: 'Bind host; non-loopback values are rewritten to 127.0.0.1' },
  },
  subCommands: {
    'issue-key': stub('issue-key', 'Issue a gateway key (prints the token once)'),
    'revoke-key': stub('revoke-key', 'Revoke a gateway key at once'),
    'rotate-key': stub('rotate-key', 'Issue a successor key; the old one works until the grace period ends'),
    'list-keys': stub('list-keys', 'List gateway keys with their on-disk and effective status'),
    backup: () => import('../backup.ts').then((m) => m.default),
    restore: () => import('../restore.ts').then((m) => m.default),
  },
  run() {
    notImplemented('svc gateway');
  },
});
