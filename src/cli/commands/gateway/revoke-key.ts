import { defineCommand } from 'citty';
import { runRevokeKey } from '../../../gateway/key-admin.ts';
import { keyIdArg, keystoreArgs, printLines, withKeyAdmin } from './common.ts';

export default defineCommand({
  meta: { name: 'revoke-key', description: 'Revoke a gateway key at once' },
  args: {
    key_id: { type: 'positional', required: true, description: 'Key id (gk_...)' },
    ...keystoreArgs,
  },
  async run({ args }) {
    const keyId = keyIdArg(args.key_id);
    const { record } = await withKeyAdmin(args, (deps) => runRevokeKey(keyId, deps));
    printLines([
      ['revoked', record.key_id],
      ['revoked_at', record.revoked_at],
    ]);
  },
});
