/**
 * `svc user forget <user_id> --confirm`: pseudonymises the id in every stored event and scrubs the
 * store file. Without --confirm it only says what it would rewrite, and exits 2 (DECISIONS §2).
 */
import { defineCommand } from 'citty';
import { assertUserId, previewForgetUser, runForgetUser } from '../../../analytics/index.ts';
import { readEnv } from '../../../config/env.ts';
import { DEFAULT_DB_PATH_HELP, resolveStoreTarget, type StoreFlags } from '../../../config/paths.ts';
import { SvcError } from '../../../lib/errors.ts';
import { formatSummaryLines } from '../../../store/backup.ts';
import { openStore } from '../../../store/open.ts';
import { runLongStatements } from '../../../store/statement-bounds.ts';
import { openCommandRuntime } from '../../runtime.ts';
import { databaseUrlArg, storeFlagsOf } from '../../store-flags.ts';

export default defineCommand({
  meta: { name: 'forget', description: "Pseudonymise a user's id in every stored event" },
  args: {
    user_id: { type: 'positional', required: true, description: 'User id (^[A-Za-z0-9_-]{1,200}$)' },
    confirm: { type: 'boolean', description: 'Required: confirm the rewrite' },
    'db-path': {
      type: 'string',
      description: `Trace store path (default SVC_DB_PATH or ${DEFAULT_DB_PATH_HELP})`,
    },
    ...databaseUrlArg,
  },
  async run({ args }) {
    const userId = assertUserId(args.user_id);
    const flags = storeFlagsOf(args);
    if (args.confirm !== true) throw await confirmationRequired(userId, flags);
    const rt = await openCommandRuntime({ dbPathFlag: flags.dbPath, databaseUrlFlag: flags.databaseUrl });
    let result: Awaited<ReturnType<typeof runForgetUser>>;
    try {
      // the rewrite and its VACUUM may take minutes on a large PostgreSQL store (statement-bounds.ts)
      result = await runLongStatements(() => runForgetUser(rt, userId));
    } catch (err) {
      await rt.close().catch(() => undefined);
      throw err;
    }
    await rt.close();
    const lines = formatSummaryLines([
      ['user_id', result.user_id],
      ['pseudonym', result.pseudonym],
      ['pseudonymized_rows', result.pseudonymized_rows],
      ['completed_at', result.completed_at],
    ]);
    process.stdout.write(`${lines}\n`);
    if (result.walTruncated === false) {
      throw new SvcError('store_error', {
        message: `The id is pseudonymised, but another process kept reading ${rt.store.path} so its WAL may still hold old pages with the original id; run svc user forget ${userId} --confirm again when the store is idle.`,
      });
    }
  },
});

// --- internal ---

/** The refusal names the store, the pseudonym and the row count when the store can be read. */
async function confirmationRequired(userId: string, flags: StoreFlags): Promise<SvcError> {
  const target = resolveStoreTarget(readEnv(), flags);
  let path = target.engine === 'sqlite' ? target.path : 'the PostgreSQL store';
  let what = `every event of the trace store ${path} that carries it`;
  let to = 'its pseudonym';
  try {
    const store = await openStore(target, { readOnly: true });
    path = store.path;
    try {
      const p = await previewForgetUser(store, userId);
      what = `${p.rows} ${p.rows === 1 ? 'event' : 'events'} of the trace store ${path}`;
      if (p.pseudonym) to = `the pseudonym ${p.pseudonym}`;
    } finally {
      await store.close();
    }
  } catch {
    // the warning stands without the count
  }
  return new SvcError('confirmation_required', {
    message: `Nothing was changed: svc user forget would rewrite the user id ${userId} to ${to} in ${what} (payload user_id, and identity_id of per-user quota events), delete no row and ${target.engine === 'sqlite' ? 'compact the store file' : 'vacuum the events table'}; pass --confirm to do it.`,
  });
}
