import { defineCommand } from 'citty';
import { runRevokeKey } from '../../../gateway/index.ts';
import { createKeyAdminDeps, keystoreArgs, printLines } from './common.ts';

export default defineCommand({
  meta: { name: 'revoke-key', description: 'Revoke a gateway key at once' },
  args: {
    key_id: { type: 'positional', required: true, description: 'Key id (gk_...)' },
    ...keystoreArgs,
  },
  async run({ args }) {
    const { record } = await runRevokeKey(args.key_id, createKeyAdminDeps(args));
    printLines([
      ['revoked', record.key_id],
      ['revoked_at', record.revoked_at],
    ]);
  },
});
