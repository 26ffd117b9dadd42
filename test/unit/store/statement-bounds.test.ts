/**
 * How long a PostgreSQL statement may go unanswered (statement-bounds.ts): the request path's bound
 * (SVC_DATABASE_TIMEOUT_MS) by default, so a hung server is a 503 instead of a hung request; reports,
 * exports and forget at least LONG_STATEMENT_MS, since a long window over a large store may take minutes
 * and must not be called an unreachable store; migrations unbounded (an index build on a large table).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  LONG_STATEMENT_MS,
  runLongStatements,
  runUnboundedStatements,
  statementBoundMs,
} from '#src/store/statement-bounds.ts';

test('the request path gets the configured bound, reports the long one, migrations none', async () => {
  assert.equal(statementBoundMs(1000), 1000);
  assert.equal(await runLongStatements(async () => statementBoundMs(1000)), LONG_STATEMENT_MS);
  assert.equal(
    await runLongStatements(async () => statementBoundMs(LONG_STATEMENT_MS * 2)),
    LONG_STATEMENT_MS * 2,
    'never below the configured bound',
  );
  // the bound follows the work across awaits, and ends with it
  const later = await runLongStatements(async () => {
    await new Promise((r) => setTimeout(r, 1));
    return statementBoundMs(1000);
  });
  assert.equal(later, LONG_STATEMENT_MS);
  assert.equal(await runUnboundedStatements(async () => statementBoundMs(1000)), undefined);
  assert.equal(statementBoundMs(1000), 1000);
});
