/**
 * @module The keystore document (spec 1 §Gateway key record): its valibot schema, the effective
 * (auth-time) status, and the pure lifecycle operations issue / revoke / rotate / sweep. Reading and
 * writing the file lives in file.ts; these functions only turn one document into the next.
 */
import * as v from 'valibot';
import { isDecimalString } from '../../lib/decimal.ts';
import { SvcError } from '../../lib/errors.ts';
import type { NewId } from '../../lib/ids.ts';
import { formatUs, parseIsoUs } from '../../lib/time.ts';
import { createToken, hashToken } from './token.ts';

const IsoTimestampSchema = v.pipe(
  v.string(),
  v.check((s) => parseIsoUs(s) !== undefined, 'must be an ISO 8601 timestamp with a zone'),
);
const DecimalSchema = v.pipe(
  v.union([v.string(), v.number()]),
  v.transform((x) => String(x)),
  v.check((s) => isDecimalString(s) && !s.startsWith('-'), 'must be a non-negative decimal'),
);
const optionalNullable = <T extends v.GenericSchema>(schema: T) => v.optional(v.nullable(schema));
const KeyIdSchema = v.pipe(v.string(), v.regex(/^gk_[0-9A-Z]{26}$/, 'must have the form gk_<ulid>'));

/** One record; unknown extra fields are kept (a newer svc may add some). */
export const KeyRecordSchema = v.looseObject({
  key_id: KeyIdSchema,
  secret_hash: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256')),
  name: v.string(),
  workspace_path: v.string(),
  allowed_models: optionalNullable(v.array(v.string())),
  daily_cap_usd: optionalNullable(DecimalSchema),
  monthly_cap_usd: optionalNullable(DecimalSchema),
  /** Set on a rotation's successor: the key whose caps' spend it shares (the first key of the chain). */
  budget_key_id: optionalNullable(KeyIdSchema),
  user_id: optionalNullable(v.string()),
  team_id: optionalNullable(v.string()),
  status: v.picklist(['active', 'revoked']),
  revoked_at: optionalNullable(IsoTimestampSchema),
  grace_period_until: optionalNullable(IsoTimestampSchema),
  created_at: IsoTimestampSchema,
});
export type KeyRecord = v.InferOutput<typeof KeyRecordSchema>;

export const KeystoreSchema = v.looseObject({ keys: v.array(KeyRecordSchema) });
export type Keystore = v.InferOutput<typeof KeystoreSchema>;

export type KeyStatus = KeyRecord['status'];

/**
 * The id a key's daily and monthly spend is counted under: a rotation's keys share one budget (the
 * successor inherits the caps, spec 1 §States, so predecessor and successor together stay within them).
 */
export function budgetKeyIdOf(key: { key_id: string; budget_key_id?: string | null }): string {
  return key.budget_key_id ?? key.key_id;
}

/** keyId → the budget its spend counts against, per `records`; a key not among them is its own. */
export function resolveBudgetOf(records: readonly KeyRecord[]): (keyId: string) => string {
  const budgets = new Map(records.map((k) => [k.key_id, budgetKeyIdOf(k)]));
  return (keyId) => budgets.get(keyId) ?? keyId;
}

/** The auth-time view of a key: an active key whose grace period has lapsed reads revoked. */
export interface EffectiveState {
  status: KeyStatus;
  /** When the key stopped working (revoked_at, or the lapsed grace_period_until). */
  revokedAt: string | null;
}

export function resolveEffectiveState(record: KeyRecord, nowUs: number): EffectiveState {
  if (record.status === 'revoked') return { status: 'revoked', revokedAt: record.revoked_at ?? null };
  const graceUs = record.grace_period_until ? parseIsoUs(record.grace_period_until) : undefined;
  if (graceUs !== undefined && graceUs <= nowUs) {
    return { status: 'revoked', revokedAt: record.grace_period_until ?? null };
  }
  return { status: 'active', revokedAt: null };
}

/**
 * Validates parsed JSON; the reason names the first failing field and what it must be (`keys[2].status:
 * must be "active" | "revoked"`), never the value found there: the reason goes to stderr and the gateway's
 * log, and a value in the wrong place may be a plaintext token.
 */
export function decodeKeystore(data: unknown): { ok: true; value: Keystore } | { ok: false; reason: string } {
  // an array passes valibot's object check, and its `keys` is Array.prototype.keys, "a Function"
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    return { ok: false, reason: 'document: must be a JSON object with a "keys" array' };
  const result = v.safeParse(KeystoreSchema, data);
  if (result.success) {
    const ids = new Set<string>();
    for (const k of result.output.keys) {
      if (ids.has(k.key_id)) return { ok: false, reason: `key_id ${k.key_id} appears twice` };
      ids.add(k.key_id);
    }
    return { ok: true, value: result.output };
  }
  const issue = result.issues[0];
  const path = (issue.path ?? [])
    .map((p) => (typeof p.key === 'number' ? `[${p.key}]` : `.${String(p.key)}`))
    .join('')
    .replace(/^\./, '');
  return { ok: false, reason: `${path || 'document'}: ${issueReason(issue)}` };
}

/** A schema issue in words that quote nothing of the file; our own checks already say what they need. */
function issueReason(issue: v.BaseIssue<unknown>): string {
  if (issue.kind !== 'schema') return issue.message;
  if (issue.received === 'undefined') return 'is missing';
  return `must be ${EXPECTED[issue.expected ?? ''] ?? issue.expected}`;
}

const EXPECTED: Record<string, string> = {
  Object: 'an object',
  Array: 'an array',
  string: 'a string',
  number: 'a number',
  null: 'null',
};

export interface NewKeyInput {
  name: string;
  workspace_path: string;
  allowed_models?: string[] | null;
  daily_cap_usd?: string | null;
  monthly_cap_usd?: string | null;
  /** Only a rotation's successor shares another key's budget. */
  budget_key_id?: string | null;
  user_id?: string | null;
  team_id?: string | null;
}

export interface OperationDeps {
  newId: NewId;
  nowUs: number;
}

/** Adds an active key; returns the new document, the record and its plaintext token (shown once). */
export function issueKey(
  store: Keystore,
  input: NewKeyInput,
  deps: OperationDeps,
): { store: Keystore; record: KeyRecord; token: string } {
  const token = createToken(Math.floor(deps.nowUs / 1000));
  const record: KeyRecord = {
    key_id: deps.newId('gk_'),
    secret_hash: hashToken(token),
    name: input.name,
    workspace_path: input.workspace_path,
    ...(input.allowed_models?.length ? { allowed_models: input.allowed_models } : {}),
    ...(input.daily_cap_usd ? { daily_cap_usd: input.daily_cap_usd } : {}),
    ...(input.monthly_cap_usd ? { monthly_cap_usd: input.monthly_cap_usd } : {}),
    ...(input.budget_key_id ? { budget_key_id: input.budget_key_id } : {}),
    ...(input.user_id ? { user_id: input.user_id } : {}),
    ...(input.team_id ? { team_id: input.team_id } : {}),
    status: 'active',
    created_at: formatUs(deps.nowUs),
  };
  return { store: { ...store, keys: [...store.keys, record] }, record, token };
}

/** Revokes at once; a key already revoked is left as it is (`alreadyRevoked`). */
export function revokeKey(
  store: Keystore,
  keyId: string,
  nowUs: number,
): { store: Keystore; record: KeyRecord; alreadyRevoked: boolean } {
  const current = findKey(store, keyId);
  if (current.status === 'revoked') return { store, record: current, alreadyRevoked: true };
  const { grace_period_until: _dropped, ...rest } = current;
  const record: KeyRecord = { ...rest, status: 'revoked', revoked_at: formatUs(nowUs) };
  return { store: replace(store, record), record, alreadyRevoked: false };
}

/**
 * Issues a successor that inherits the predecessor's scope, tags and caps (spec 1 §States), and sets
 * the predecessor's grace_period_until. The caps are inherited as one budget: the successor's spend
 * counts with its predecessor's (budget_key_id, the chain's first key), so a rotation never doubles a cap.
 * Only a key that is active and not already rotated qualifies.
 */
export function rotateKey(
  store: Keystore,
  keyId: string,
  graceUs: number,
  deps: OperationDeps,
): { store: Keystore; predecessor: KeyRecord; successor: KeyRecord; token: string } {
  const current = findKey(store, keyId);
  const state = resolveEffectiveState(current, deps.nowUs);
  if (state.status === 'revoked') {
    throw new SvcError('key_revoked', {
      message: `Gateway key ${keyId} is revoked (since ${state.revokedAt}); only an active key can be rotated — issue a new one with \`svc gateway issue-key\`.`,
    });
  }
  if (current.grace_period_until) {
    throw new SvcError('invalid_request', {
      message: `Gateway key ${keyId} was already rotated and stops working at ${current.grace_period_until}; rotate its successor instead.`,
    });
  }
  const issued = issueKey(
    store,
    {
      name: current.name,
      workspace_path: current.workspace_path,
      allowed_models: current.allowed_models,
      daily_cap_usd: current.daily_cap_usd,
      monthly_cap_usd: current.monthly_cap_usd,
      budget_key_id: budgetKeyIdOf(current),
      user_id: current.user_id,
      team_id: current.team_id,
    },
    deps,
  );
  const predecessor: KeyRecord = { ...current, grace_period_until: formatUs(deps.nowUs + graceUs) };
  return {
    store: replace(issued.store, predecessor),
    predecessor,
    successor: issued.record,
    token: issued.token,
  };
}

/** Persists lapsed grace periods as revocations (revoked_at = the lapsed boundary); returns what changed. */
export function sweepExpiredGrace(store: Keystore, nowUs: number): { store: Keystore; swept: KeyRecord[] } {
  const swept: KeyRecord[] = [];
  const keys = store.keys.map((k) => {
    const state = resolveEffectiveState(k, nowUs);
    if (k.status !== 'active' || state.status !== 'revoked') return k;
    const record: KeyRecord = { ...k, status: 'revoked', revoked_at: state.revokedAt };
    swept.push(record);
    return record;
  });
  return { store: swept.length ? { ...store, keys } : store, swept };
}

export function findKey(store: Keystore, keyId: string): KeyRecord {
  const found = store.keys.find((k) => k.key_id === keyId);
  if (!found) {
    throw new SvcError('key_not_found', {
      message: `No gateway key with id ${keyId} exists; run \`svc gateway list-keys\` to see the key ids.`,
    });
  }
  return found;
}

// --- internal ---

function replace(store: Keystore, record: KeyRecord): Keystore {
  return { ...store, keys: store.keys.map((k) => (k.key_id === record.key_id ? record : k)) };
}
