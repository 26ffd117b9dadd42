/**
 * `svc backup` is a consistent hot snapshot under a concurrent writer, and `svc restore` brings back
 * exactly the rows that were backed up. Through the real executable.
 */
import assert from 'node:assert/strict';
import { existsSync, lstatSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { SCHEMA_VERSION } from '#src/store/migrate.ts';
import { startStoreWriter } from '../helpers/store-writer.ts';
import { isolatedEnv, makeTempDir, runSvc } from '../helpers/svc.ts';

const tmp = makeTempDir('svc-br-trip-');
test.after(() => tmp.cleanup());
const env = isolatedEnv(tmp.dir);
const p = (name: string) => join(tmp.dir, name);

function withDb<T>(path: string, fn: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}
const count = (path: string) =>
  withDb(path, (db) => Number((db.prepare('SELECT count(*) AS c FROM events').get() as { c: number }).c));
const dump = (path: string) =>
  withDb(path, (db) =>
    ['events', 'sessions', 'messages', 'tool_calls', 'store_meta'].map((t) =>
      db
        .prepare(`SELECT * FROM ${t} ORDER BY 1`)
        .all()
        .map((r) => JSON.stringify(r)),
    ),
  );

function parseReport(stdout: string): Record<string, string> {
  return Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]),
  );
}

test('a backup taken while another process writes 20,000 events is consistent and complete up to its moment', async (t) => {
  const live = p('busy/svc.db');
  const writer = startStoreWriter(['write', live, '20000', '10'], t);
  await writer.waitFor('first');
  const before = count(live);
  const r = await runSvc(['backup', p('busy-backup.db'), '--db-path', live], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await writer.exited, 0, writer.output().stderr);
  const after = count(live);
  assert.equal(after, 20_001); // the writer's subscriber registration plus its events

  const report = parseReport(r.stdout);
  assert.deepEqual(Object.keys(report), [
    'source',
    'destination',
    'bytes',
    'schema_version',
    'events',
    'oldest_event',
    'newest_event',
  ]);
  assert.equal(report.source, live);
  assert.equal(report.destination, p('busy-backup.db'));
  assert.equal(report.schema_version, String(SCHEMA_VERSION));
  const inBackup = count(p('busy-backup.db'));
  assert.equal(Number(report.events), inBackup);
  assert.ok(before <= inBackup && inBackup <= after, `${before} <= ${inBackup} <= ${after}`);
  assert.match(report.oldest_event, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  assert.ok(report.newest_event >= report.oldest_event);
  assert.equal(Number(report.bytes) > 0, true);

  withDb(p('busy-backup.db'), (db) => {
    assert.equal(
      (db.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check,
      'ok',
    );
    assert.equal(
      (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version,
      SCHEMA_VERSION,
    );
    // a single file: no WAL needed to read it
    assert.equal(
      (db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode,
      'delete',
    );
  });
  assert.equal(existsSync(`${p('busy-backup.db')}-wal`), false);
});

test('restore round-trip gives identical rows, replacing a store that has moved on', async (t) => {
  const live = p('trip/svc.db');
  const w1 = startStoreWriter(['write', live, '300', '50'], t);
  assert.equal(await w1.exited, 0);
  const snapshot = dump(live);
  const b = await runSvc(['backup', p('trip-backup.db'), '--db-path', live], { env });
  assert.equal(b.code, 0, b.stderr);
  const w2 = startStoreWriter(['write', live, '100', '50'], t);
  assert.equal(await w2.exited, 0);
  assert.equal(count(live), 402);

  const r = await runSvc(['restore', p('trip-backup.db'), '--db-path', live, '--force'], { env });
  assert.equal(r.code, 0, r.stderr);
  const report = parseReport(r.stdout);
  assert.equal(report.replaced_existing, 'yes');
  assert.equal(report.events, '301');
  assert.equal(report.schema_version, String(SCHEMA_VERSION));
  assert.deepEqual(dump(live), snapshot);

  // the restored store is a working store: a writer can append to it
  const w3 = startStoreWriter(['write', live, '10', '10'], t);
  assert.equal(await w3.exited, 0);
  assert.equal(count(live), 312);

  // a --db-path that is a link to the store restores the store it names: the link stays a link
  symlinkSync(live, p('trip-link.db'));
  const viaLink = await runSvc(['restore', p('trip-backup.db'), '--db-path', p('trip-link.db'), '--force'], {
    env,
  });
  assert.equal(viaLink.code, 0, viaLink.stderr);
  assert.equal(parseReport(viaLink.stdout).destination, live);
  assert.equal(parseReport(viaLink.stdout).replaced_existing, 'yes');
  assert.equal(lstatSync(p('trip-link.db')).isSymbolicLink(), true, 'the link is still a link');
  assert.deepEqual(dump(live), snapshot);
});

test('backup into new folders and restore into a new path need no --force; gateway backup honours SVC_GATEWAY_DB_PATH, svc backup the XDG default', async (t) => {
  const xdgStore = join(tmp.dir, '.config/svc/svc.db');
  const w = startStoreWriter(['write', xdgStore, '5', '5'], t);
  assert.equal(await w.exited, 0);
  const gatewayStore = p('gw/svc.db');
  // README: missing folders above the destination are created
  const b = await runSvc(['backup', p('backups/2026/from-xdg.db')], { env });
  assert.equal(b.code, 0, b.stderr);
  assert.equal(parseReport(b.stdout).source, xdgStore);
  assert.equal(parseReport(b.stdout).events, '6');

  const r = await runSvc(['gateway', 'restore', p('backups/2026/from-xdg.db')], {
    env: { ...env, SVC_GATEWAY_DB_PATH: gatewayStore, SVC_DB_PATH: p('not-this.db') },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(parseReport(r.stdout).destination, gatewayStore);
  assert.equal(parseReport(r.stdout).replaced_existing, 'no');
  assert.equal(count(gatewayStore), 6);

  const gb = await runSvc(['gateway', 'backup', p('gw-backup.db')], {
    env: { ...env, SVC_GATEWAY_DB_PATH: gatewayStore, SVC_DB_PATH: p('not-this.db') },
  });
  assert.equal(gb.code, 0, gb.stderr);
  assert.equal(parseReport(gb.stdout).source, gatewayStore);
  const sb = await runSvc(['backup', p('env-backup.db')], { env: { ...env, SVC_DB_PATH: gatewayStore } });
  assert.equal(parseReport(sb.stdout).source, gatewayStore);
});
