/**
 * A PostgreSQL store that stops answering mid-command (restart, failover, a cut connection) is said on the
 * command line as one sentence saying to run the command again, instead of 'unexpected error: … (set
 * SVC_DEBUG=1 for details)'; the agent server answers the same failures 503 store_unavailable. Statements the
 * server refused (a unique violation, a serialization failure) and other errors are not store outages.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeUnreachableStore, isStoreUnreachable } from '../../../src/store/dialect.ts';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

test('lost or refused connections are an unreachable store, said in one sentence', () => {
  const outages = [
    withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
    withCode('read ECONNRESET', 'ECONNRESET'),
    new Error('Connection terminated unexpectedly'),
    new Error('Client has encountered a connection error and is not queryable'),
    new Error('timeout exceeded when trying to connect'),
    new Error('Query read timeout'), // a statement unanswered past its bound: a paused server
    withCode('terminating connection due to administrator command', '57P01'),
    withCode('the database system is starting up', '57P03'),
    withCode('connection failure', '08006'),
  ];
  for (const err of outages) {
    assert.equal(isStoreUnreachable(err), true, err.message);
    const sentence = describeUnreachableStore(err);
    assert.ok(sentence, err.message);
    assert.match(sentence, /^The PostgreSQL store stopped answering \(/);
    assert.ok(sentence.includes(err.message), 'names what failed');
    assert.match(sentence, /run the command again once the database is back/);
    assert.equal(sentence.includes('\n'), false, 'one line');
    assert.match(sentence, /\.$/);
  }
});

test('refused statements and other failures are not an unreachable store', () => {
  const others = [
    withCode('duplicate key value violates unique constraint', '23505'),
    withCode('could not serialize access', '40001'),
    withCode('password authentication failed for user "svc"', '28P01'),
    new Error('something else'),
    'a string',
    undefined,
    null,
  ];
  for (const err of others) {
    assert.equal(isStoreUnreachable(err), false, String(err));
    assert.equal(describeUnreachableStore(err), undefined);
  }
});
