import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ATTACH_TOKEN_TTL_MS,
  type AttachEntry,
  createAttachTokens,
} from '#src/agent/sessions/attach-tokens.ts';

function tokens() {
  let nowUs = 1_000_000_000;
  const store = createAttachTokens({ clock: { nowUs: () => nowUs } });
  return { store, advance: (ms: number) => (nowUs += ms * 1000) };
}

test('a token is atk_<ulid>, works once, and only for the session it was issued for', () => {
  const { store } = tokens();
  const { token } = store.issue('sess_a');
  assert.match(token, /^atk_[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.equal(store.consume(token, 'sess_b'), 'wrong_session');
  assert.equal(store.consume(token, 'sess_a'), 'ok');
  assert.equal(store.consume(token, 'sess_a'), 'unknown');
  assert.equal(store.consume('atk_unknown', 'sess_a'), 'unknown');
});

test('tokens issued in one millisecond cannot be told from one another (not the monotonic ids of the server)', () => {
  const { store } = tokens();
  // a monotonic ULID made in the same millisecond is the previous one plus one: its random part shares
  // about 15 of 16 characters with it; fresh randomness shares 12 with chance 32^-12
  const random = (token: string) => token.slice('atk_'.length + 10);
  let previous = random(store.issue('sess_a').token);
  for (let i = 0; i < 50; i++) {
    const next = random(store.issue('sess_a').token);
    let shared = 0;
    while (shared < next.length && next[shared] === previous[shared]) shared++;
    assert.ok(shared < 12, `${previous} then ${next}`);
    previous = next;
  }
});

test('every issue is a fresh token and earlier ones stay valid', () => {
  const { store } = tokens();
  const first = store.issue('sess_a').token;
  const second = store.issue('sess_a').token;
  assert.notEqual(first, second);
  assert.equal(store.size, 2);
  assert.equal(store.consume(first, 'sess_a'), 'ok');
  assert.equal(store.consume(second, 'sess_a'), 'ok');
});

test('a token expires 60 seconds after it was issued', () => {
  const { store, advance } = tokens();
  const early = store.issue('sess_a').token;
  const late = store.issue('sess_a').token;
  advance(ATTACH_TOKEN_TTL_MS - 1);
  assert.equal(store.consume(early, 'sess_a'), 'ok');
  advance(1);
  assert.equal(store.consume(late, 'sess_a'), 'expired');
  assert.equal(store.consume(late, 'sess_a'), 'unknown');
  assert.equal(store.size, 0);
});

test('the sweep drops the expired tokens and keeps every live one issued after them', () => {
  const { store, advance } = tokens();
  const old = store.issue('sess_a').token;
  advance(30_000);
  const live = [store.issue('sess_a').token, store.issue('sess_b').token];
  advance(ATTACH_TOKEN_TTL_MS - 30_000);
  assert.equal(store.size, 2, 'the first token expired, the two later ones did not');
  assert.equal(store.consume(old, 'sess_a'), 'unknown');
  assert.equal(store.consume(live[0], 'sess_a'), 'ok');
  assert.equal(store.consume(live[1], 'sess_b'), 'ok');
});

test('a GET flood reads each live token once, not every live token on every GET', () => {
  // the sweep runs on every issue (every GET /sessions/{id}); a table that counts the entries read shows
  // whether it stops at the first live token or reads them all (n GETs: about n reads, not n²/2)
  let reads = 0;
  class CountingTable extends Map<string, AttachEntry> {
    override *[Symbol.iterator](): MapIterator<[string, AttachEntry]> {
      for (const pair of super[Symbol.iterator]()) {
        reads++;
        yield pair;
      }
    }
  }
  let nowUs = 1_000_000_000;
  const store = createAttachTokens({
    clock: { nowUs: () => nowUs },
    table: new CountingTable(),
  });
  const flood = 2_000;
  for (let i = 0; i < flood; i++) store.issue('sess_a');
  assert.ok(reads < flood, `${reads} entries read for ${flood} GETs`);
  reads = 0;
  nowUs += ATTACH_TOKEN_TTL_MS * 1000; // all of them expired: the next GET drops them, reading each once
  store.issue('sess_a');
  assert.equal(reads, flood);
  assert.equal(store.size, 1);
});
