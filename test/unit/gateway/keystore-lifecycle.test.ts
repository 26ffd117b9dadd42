import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseGracePeriod } from '#src/gateway/keystore/grace-period.ts';
import {
  decodeKeystore,
  issueKey,
  type Keystore,
  resolveEffectiveState,
  revokeKey,
  rotateKey,
  sweepExpiredGrace,
} from '#src/gateway/keystore/keystore.ts';
import { createToken, hashToken } from '#src/gateway/keystore/token.ts';
import { SvcError } from '#src/lib/errors.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { formatUs, parseIsoUs } from '#src/lib/time.ts';

const T0 = Date.parse('2026-11-22T06:00:00Z') * 1000;
const MIN = 60_000_000;
const deps = () => ({ newId: createIdFactory(), nowUs: T0 });
const empty: Keystore = { keys: [] };
const input = {
  name: 'ci',
  workspace_path: '/w',
  allowed_models: ['anthropic:claude-sonnet-4-5'],
  daily_cap_usd: '5',
  monthly_cap_usd: '50.25',
  user_id: 'usr_1',
  team_id: 'team_1',
};

test('a token is gw_<ulid> with fresh randomness, and only its SHA-256 is stored', () => {
  const a = createToken();
  const b = createToken();
  assert.match(a, /^gw_[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.notEqual(a.slice(13), b.slice(13));
  const { record, token, store } = issueKey(empty, input, deps());
  assert.equal(record.secret_hash, hashToken(token));
  assert.match(record.key_id, /^gk_[0-9A-Z]{26}$/);
  assert.ok(!JSON.stringify(store).includes(token));
});

test('an issued key is active and valid against the schema', () => {
  const { store, record } = issueKey(empty, input, deps());
  assert.equal(record.status, 'active');
  assert.equal(record.created_at, formatUs(T0));
  const decoded = decodeKeystore(JSON.parse(JSON.stringify(store)));
  assert.ok(decoded.ok);
});

test('revocation sets revoked_at and is idempotent', () => {
  const { store, record } = issueKey(empty, input, deps());
  const r = revokeKey(store, record.key_id, T0 + MIN);
  assert.equal(r.record.status, 'revoked');
  assert.equal(r.record.revoked_at, formatUs(T0 + MIN));
  assert.equal(r.alreadyRevoked, false);
  const again = revokeKey(r.store, record.key_id, T0 + 2 * MIN);
  assert.equal(again.alreadyRevoked, true);
  assert.equal(again.record.revoked_at, formatUs(T0 + MIN));
});

test('an unknown key id is key_not_found naming the id', () => {
  assert.throws(
    () => revokeKey(empty, 'gk_nope', T0),
    (e: unknown) => e instanceof SvcError && e.code === 'key_not_found' && e.message.includes('gk_nope'),
  );
});

test('rotation copies scope, tags and caps, and sets the predecessor grace period', () => {
  const issued = issueKey(empty, input, deps());
  const r = rotateKey(issued.store, issued.record.key_id, 30 * MIN, deps());
  for (const f of [
    'workspace_path',
    'user_id',
    'team_id',
    'allowed_models',
    'daily_cap_usd',
    'monthly_cap_usd',
  ]) {
    assert.deepEqual(r.successor[f], issued.record[f], f);
  }
  assert.notEqual(r.successor.key_id, issued.record.key_id);
  assert.equal(r.successor.secret_hash, hashToken(r.token));
  assert.equal(r.predecessor.grace_period_until, formatUs(T0 + 30 * MIN));
  assert.equal(r.store.keys.length, 2);
});

test('a lapsed grace period reads revoked at auth time, revoked_at being the boundary', () => {
  const issued = issueKey(empty, input, deps());
  const { predecessor } = rotateKey(issued.store, issued.record.key_id, 30 * MIN, deps());
  assert.equal(resolveEffectiveState(predecessor, T0 + 29 * MIN).status, 'active');
  const lapsed = resolveEffectiveState(predecessor, T0 + 30 * MIN);
  assert.equal(lapsed.status, 'revoked');
  assert.equal(lapsed.revokedAt, predecessor.grace_period_until);
});

test('the sweep persists lapsed grace periods once and leaves everything else alone', () => {
  const issued = issueKey(empty, input, deps());
  const rotated = rotateKey(issued.store, issued.record.key_id, 30 * MIN, deps());
  const early = sweepExpiredGrace(rotated.store, T0 + MIN);
  assert.equal(early.swept.length, 0);
  assert.equal(early.store, rotated.store);
  const late = sweepExpiredGrace(rotated.store, T0 + 31 * MIN);
  assert.deepEqual(
    late.swept.map((k) => k.key_id),
    [issued.record.key_id],
  );
  assert.equal(late.swept[0].revoked_at, rotated.predecessor.grace_period_until);
  assert.equal(sweepExpiredGrace(late.store, T0 + 40 * MIN).swept.length, 0);
});

test('a revoked or already rotated key cannot be rotated', () => {
  const issued = issueKey(empty, input, deps());
  const rotated = rotateKey(issued.store, issued.record.key_id, 30 * MIN, deps());
  assert.throws(() => rotateKey(rotated.store, issued.record.key_id, MIN, deps()), /already rotated/);
  const revoked = revokeKey(issued.store, issued.record.key_id, T0);
  assert.throws(() => rotateKey(revoked.store, issued.record.key_id, MIN, deps()), /revoked/);
});

test('schema failures name the field', () => {
  const bad = decodeKeystore({ keys: [{ key_id: 'gk_x' }] });
  assert.equal(bad.ok, false);
  assert.match(bad.ok ? '' : bad.reason, /^keys\[0\]\.key_id: /);
  const noKeys = decodeKeystore({ nope: true });
  assert.match(noKeys.ok ? '' : noKeys.reason, /keys/);
});

test('a schema failure says what the field must be and never quotes the value found (it may be a token)', () => {
  const token = createToken();
  const issued = issueKey(empty, input, deps()).record;
  const reasonOf = (data: unknown) => {
    const r = decodeKeystore(data);
    assert.equal(r.ok, false);
    return r.ok ? '' : r.reason;
  };
  for (const [data, reason] of [
    [[], 'document: must be a JSON object with a "keys" array'],
    [[{ keys: [] }], 'document: must be a JSON object with a "keys" array'],
    [token, 'document: must be a JSON object with a "keys" array'],
    [{ keys: [token] }, 'keys[0]: must be an object'],
    [{ keys: [{ ...issued, name: token.length }] }, 'keys[0].name: must be a string'],
    [
      { keys: [{ ...issued, user_id: undefined, workspace_path: undefined }] },
      'keys[0].workspace_path: is missing',
    ],
  ] as const) {
    assert.equal(reasonOf(data), reason);
  }
  assert.ok(!reasonOf({ keys: [{ ...issued, status: token }] }).includes(token));
});

test('grace periods accept <n>m|h|d|w and refuse anything else as a usage error', () => {
  assert.equal(parseGracePeriod('30m'), 30 * MIN);
  assert.equal(parseGracePeriod('24h'), 24 * 60 * MIN);
  assert.equal(parseGracePeriod('7d'), 7 * 24 * 60 * MIN);
  assert.equal(parseGracePeriod('2w'), 14 * 24 * 60 * MIN);
  for (const bad of ['10s', '0m', '1.5h', 'h', '', '24', '-1h', '53w']) {
    assert.throws(
      () => parseGracePeriod(bad),
      (e: unknown) => e instanceof SvcError && e.exitCode === 2 && /30m, 24h, 7d or 2w/.test(e.message),
      bad,
    );
  }
  assert.equal(parseIsoUs(formatUs(T0)), T0);
});
