/**
 * Helpers for gateway e2e tests: an isolated environment with a keystore and trace store in a temp
 * dir, key commands through the real executable, and SQL over the trace store.
 */
import assert from 'node:assert/strict';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { isolatedEnv, runSvc } from './svc.ts';

export interface GatewayFiles {
  env: NodeJS.ProcessEnv;
  keystore: string;
  db: string;
}

/** Env with a fake provider key (no upstream call is made) and private keystore and trace store paths. */
export function gatewayFiles(home: string, extra: Record<string, string | undefined> = {}): GatewayFiles {
  const keystore = join(home, 'keys.json');
  const db = join(home, 'svc.db');
  return {
    keystore,
    db,
    env: isolatedEnv(home, {
      ANTHROPIC_API_KEY: 'test-provider-key',
      SVC_GATEWAY_KEYSTORE: keystore,
      SVC_GATEWAY_DB_PATH: db,
      ...extra,
    }),
  };
}

/** `label: value` lines of an operator command. */
export function parseLines(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const i = line.indexOf(': ');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 2);
  }
  return out;
}

export async function issueKey(
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): Promise<{ keyId: string; token: string }> {
  const r = await runSvc(['gateway', 'issue-key', '--name', 'test', '--workspace', '/tmp', ...args], { env });
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  return { keyId: lines.key_id, token: lines.token };
}

export interface EventRow {
  id: string;
  type: string;
  turn_id: string | null;
  payload: Record<string, unknown>;
}

/** Events of the trace store, in id order, optionally of one type. */
export function readEvents(dbPath: string, type?: string): EventRow[] {
  const db = new DatabaseSync(dbPath);
  try {
    const rows = (
      type
        ? db.prepare('SELECT id, type, turn_id, payload FROM events WHERE type = ? ORDER BY id').all(type)
        : db.prepare('SELECT id, type, turn_id, payload FROM events ORDER BY id').all()
    ) as Array<{ id: string; type: string; turn_id: string | null; payload: string }>;
    return rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) }));
  } finally {
    db.close();
  }
}

/** Rewrites one record's field the way an atomic writer would (new file renamed over the old). */
export function editKeyRecord(keystore: string, keyId: string, patch: Record<string, unknown>): void {
  const doc = JSON.parse(readFileSync(keystore, 'utf8')) as { keys: Array<Record<string, unknown>> };
  doc.keys = doc.keys.map((k) => (k.key_id === keyId ? { ...k, ...patch } : k));
  writeFileSync(`${keystore}.edit`, JSON.stringify(doc), { mode: 0o600 });
  renameSync(`${keystore}.edit`, keystore);
}
