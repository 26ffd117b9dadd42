/**
 * @module The operator's key lifecycle (spec 1 §Operator commands, §States): issue, revoke, rotate and
 * list, each one locked read-modify-write of the keystore (the keys.json file, or the gateway_keys table
 * on PostgreSQL) followed by its audit events. `list` and
 * `revoke` also sweep: lapsed grace periods are persisted as revocations, each announced exactly once.
 */
import type { EventInput } from '../events/envelope.ts';
import { SvcError } from '../lib/errors.ts';
import type { NewId } from '../lib/ids.ts';
import type { Clock } from '../lib/time.ts';
import { isReadOnlyKeystore, type KeystoreChange } from './keystore/file.ts';
import {
  issueKey,
  type KeyRecord,
  KeyRecordSchema,
  type KeyStatus,
  type Keystore,
  type NewKeyInput,
  resolveEffectiveState,
  revokeKey,
  rotateKey,
  sweepExpiredGrace,
} from './keystore/keystore.ts';

/** Records audit events in the trace store (or warns that it cannot); never fails the command. */
export type AuditSink = (events: EventInput[]) => Promise<void>;

/** One locked read-modify-write of wherever the keys live; `change` sees undefined when there is none yet. */
export type UpdateKeystore = <T>(change: (current: Keystore | undefined) => KeystoreChange<T>) => Promise<T>;

export interface KeyAdminDeps {
  updateKeystore: UpdateKeystore;
  newId: NewId;
  clock: Clock;
  audit: AuditSink;
  /** The keystore file, when the keys live in one (named when it does not exist); absent: the keys table. */
  keystorePath?: string;
  /** One warning sentence for the operator (stderr); the command still succeeds. */
  warn?: (message: string) => void;
}

export type RevocationReason = 'operator' | 'grace_period_expired';

/** A listed key: the record without its secret, plus the auth-time status. */
export interface ListedKey {
  key_id: string;
  name: string;
  workspace_path: string;
  allowed_models?: string[] | null;
  daily_cap_usd?: string | null;
  monthly_cap_usd?: string | null;
  user_id?: string | null;
  team_id?: string | null;
  status: KeyStatus;
  effective_status: KeyStatus;
  revoked_at?: string | null;
  grace_period_until?: string | null;
  created_at: string;
  /** A rotation's successor: the key whose budget it shares. */
  budget_key_id?: string | null;
  [extra: string]: unknown;
}

/** Adds a key (creating the keystore if absent); the token is returned for printing once. */
export async function runIssueKey(
  input: NewKeyInput,
  deps: KeyAdminDeps,
): Promise<{ record: KeyRecord; token: string }> {
  const nowUs = deps.clock.nowUs();
  const issued = await deps.updateKeystore((current) => {
    const r = issueKey(current ?? EMPTY, input, { newId: deps.newId, nowUs });
    return { next: r.store, result: r };
  });
  await deps.audit([
    { type: 'gateway.key_issued', actor: 'operator', payload: { ...describe(issued.record) } },
  ]);
  return { record: issued.record, token: issued.token };
}

/** Revokes at once (sweeping lapsed grace periods first); revoking a revoked key changes nothing. */
export async function runRevokeKey(keyId: string, deps: KeyAdminDeps): Promise<{ record: KeyRecord }> {
  const nowUs = deps.clock.nowUs();
  const { swept, record, alreadyRevoked } = await deps.updateKeystore((current) => {
    if (!current && deps.keystorePath !== undefined) throw noKeystore(deps.keystorePath);
    const sweep = sweepExpiredGrace(current ?? EMPTY, nowUs);
    const r = revokeKey(sweep.store, keyId, nowUs);
    const changed = sweep.swept.length > 0 || !r.alreadyRevoked;
    return { next: changed ? r.store : undefined, result: { ...r, swept: sweep.swept } };
  });
  const events = swept.map((k) => revokedEvent(k, 'grace_period_expired'));
  if (!alreadyRevoked) events.push(revokedEvent(record, 'operator'));
  await deps.audit(events);
  return { record };
}

/** Issues a successor with the predecessor's scope; the predecessor works until the grace period ends. */
export async function runRotateKey(
  keyId: string,
  graceUs: number,
  deps: KeyAdminDeps,
): Promise<{ predecessor: KeyRecord; successor: KeyRecord; token: string }> {
  const nowUs = deps.clock.nowUs();
  const rotated = await deps.updateKeystore((current) => {
    if (!current && deps.keystorePath !== undefined) throw noKeystore(deps.keystorePath);
    const r = rotateKey(current ?? EMPTY, keyId, graceUs, { newId: deps.newId, nowUs });
    return { next: r.store, result: r };
  });
  const { predecessor, successor } = rotated;
  await deps.audit([
    {
      type: 'gateway.key_rotated',
      actor: 'operator',
      payload: {
        key_id: predecessor.key_id,
        old_key_id: predecessor.key_id,
        new_key_id: successor.key_id,
        grace_period_until: predecessor.grace_period_until,
        user_id: successor.user_id ?? null,
        team_id: successor.team_id ?? null,
      },
    },
  ]);
  return rotated;
}

/** Every key with its on-disk and effective status, after sweeping lapsed grace periods. */
export async function runListKeys(deps: KeyAdminDeps): Promise<ListedKey[]> {
  const nowUs = deps.clock.nowUs();
  const listing = (persist: boolean) =>
    deps.updateKeystore((current) => {
      const keys = current ?? EMPTY;
      if (!persist)
        return { next: undefined, result: { store: keys, swept: [] as KeyRecord[], missing: !current } };
      const sweep = sweepExpiredGrace(keys, nowUs);
      return { next: sweep.swept.length ? sweep.store : undefined, result: { ...sweep, missing: !current } };
    });
  let listed: Awaited<ReturnType<typeof listing>>;
  try {
    listed = await listing(true);
  } catch (err) {
    if (!isReadOnlyKeystore(err)) throw err;
    // a keystore mounted read-only (the chart's Secret) is listed as it is: the effective status already
    // reads revoked; recording the lapse (and its audit event) is left to a listing of a writable copy
    listed = await listing(false);
    deps.warn?.(
      `the keystore ${deps.keystorePath} cannot be written, so lapsed grace periods are shown as revoked (EFFECTIVE_STATUS) but not recorded; run list-keys on a writable copy to record them.`,
    );
  }
  const { store, swept, missing } = listed;
  // no file at the path is a wrong path or no key issued yet, never an empty list that hides which (exit 1)
  if (missing && deps.keystorePath !== undefined) throw noKeystore(deps.keystorePath);
  await deps.audit(swept.map((k) => revokedEvent(k, 'grace_period_expired')));
  return store.keys.map((record) => {
    const { secret_hash: _secret, ...rest } = record;
    // every record field in the spec's order, null when unset, so a reader never meets a missing field
    return {
      key_id: record.key_id,
      name: record.name,
      workspace_path: record.workspace_path,
      allowed_models: record.allowed_models ?? null,
      daily_cap_usd: record.daily_cap_usd ?? null,
      monthly_cap_usd: record.monthly_cap_usd ?? null,
      user_id: record.user_id ?? null,
      team_id: record.team_id ?? null,
      status: record.status,
      effective_status: resolveEffectiveState(record, nowUs).status,
      revoked_at: record.revoked_at ?? null,
      grace_period_until: record.grace_period_until ?? null,
      created_at: record.created_at,
      budget_key_id: record.budget_key_id ?? null,
      ...extraFields(rest),
    };
  });
}

// --- internal ---

const EMPTY: Keystore = { keys: [] };

/** Fields a record carries beyond the spec's and budget_key_id (kept in the listing after them). */
function extraFields(rest: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) if (!LISTED_FIELDS.has(k)) out[k] = v;
  return out;
}

/** The record's own fields (KeyRecordSchema); anything else a record carries is listed after them. */
const LISTED_FIELDS: ReadonlySet<string> = new Set(Object.keys(KeyRecordSchema.entries));

/** Audit payload fields: identity and scope, never the secret hash. */
function describe(k: KeyRecord): Record<string, unknown> {
  return {
    key_id: k.key_id,
    name: k.name,
    workspace_path: k.workspace_path,
    user_id: k.user_id ?? null,
    team_id: k.team_id ?? null,
    allowed_models: k.allowed_models ?? null,
    daily_cap_usd: k.daily_cap_usd ?? null,
    monthly_cap_usd: k.monthly_cap_usd ?? null,
  };
}

function revokedEvent(k: KeyRecord, reason: RevocationReason): EventInput<'gateway.key_revoked'> {
  return {
    type: 'gateway.key_revoked',
    actor: 'operator',
    payload: {
      key_id: k.key_id,
      reason,
      revoked_at: k.revoked_at ?? null,
      user_id: k.user_id ?? null,
      team_id: k.team_id ?? null,
    },
  };
}

/**
 * No file at the keystore path: a wrong path or no key issued yet. Every key command but issue-key (which
 * creates it) says so, rather than "no key with id …" or an empty list, which would hide which (exit 1).
 */
function noKeystore(path: string): SvcError {
  return new SvcError('not_found', {
    message: `There is no keystore at ${path}; issue the first key with \`svc gateway issue-key --name <name> --workspace <dir> --keystore ${path}\` (it creates the file), or point --keystore / SVC_GATEWAY_KEYSTORE at the keys file.`,
  });
}
