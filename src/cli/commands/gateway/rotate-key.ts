import { defineCommand } from 'citty';
import { runRotateKey } from '../../../gateway/key-admin.ts';
import { DEFAULT_GRACE_PERIOD, parseGracePeriod } from '../../../gateway/keystore/grace-period.ts';
import { keyIdArg, keystoreArgs, printTokenLines, withKeyAdmin } from './common.ts';

export default defineCommand({
  meta: {
    name: 'rotate-key',
    description: 'Issue a successor key; the old one works until the grace period ends',
  },
  args: {
    key_id: { type: 'positional', required: true, description: 'Key id to rotate (gk_...)' },
    'grace-period': {
      type: 'string',
      description: `How long the old key keeps working: <n>m, <n>h, <n>d or <n>w such as 30m, 24h, 7d, 2w (default ${DEFAULT_GRACE_PERIOD})`,
    },
    ...keystoreArgs,
  },
  async run({ args }) {
    const keyId = keyIdArg(args.key_id);
    const graceUs = parseGracePeriod(args['grace-period'] ?? DEFAULT_GRACE_PERIOD);
    const { predecessor, successor, token } = await withKeyAdmin(args, (deps) =>
      runRotateKey(keyId, graceUs, deps),
    );
    await printTokenLines(
      [
        ['old_key_id', predecessor.key_id],
        ['new_key_id', successor.key_id],
        ['new_token', token],
        ['grace_period_until', predecessor.grace_period_until],
      ],
      (code) =>
        `Key ${predecessor.key_id} was rotated to ${successor.key_id}, but the new token could not be written to standard output (${code}), and it is shown only once; rotate ${successor.key_id} in turn with \`svc gateway rotate-key ${successor.key_id}\` for a token you can read (${predecessor.key_id} works until ${predecessor.grace_period_until}).`,
    );
  },
});
