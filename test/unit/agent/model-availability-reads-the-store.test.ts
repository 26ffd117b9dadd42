/**
 * GET /models `model_unavailable` (model-availability.ts): which failed calls say the provider has no such
 * model, read from the trace store (rows any process wrote), the latest answered call clearing it; each
 * read is an index range, never a scan of the events table, and a later read takes only the newer rows.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type CompiledQuery, Kysely } from 'kysely';
import { createModelAvailabilityView, saysModelUnavailable } from '#src/agent/model-availability.ts';
import { silentLogger } from '#src/lib/log.ts';
import { createNodeSqliteDialect } from '#src/store/node-sqlite-dialect.ts';
import { openStore } from '#src/store/open.ts';
import type { Database } from '#src/store/schema.ts';
import { BASE_US, callEvent } from '../../helpers/analytics-events.ts';
import { describeEachEngine } from '../../helpers/engines.ts';
import { eventRowOf, type SeedEvent, seqId } from '../../helpers/event-rows.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';

const postgres = useTestPostgres();

const failure = (model: string, at: number, fields: Record<string, unknown>) => (id: string) => {
  const e = callEvent(id, { at, model, type: 'llm.call_failed', cost: null, errorClass: 'invalid_request' });
  return { ...e, payload: { ...(e.payload as Record<string, unknown>), ...fields } };
};
const answer = (model: string, at: number) => (id: string) => callEvent(id, { at, model });

test('the providers’ answers for a model they do not have, and nothing else', () => {
  const says = (status: number, upstream_type: string | undefined, message: string) =>
    saysModelUnavailable({ status, upstream_type, message });
  assert.equal(says(404, 'model_not_found', 'The model `gpt-9` does not exist.'), true);
  assert.equal(says(403, 'model_not_found', 'Project does not have access to model `gpt-5`'), true);
  assert.equal(says(404, 'not_found_error', 'model: claude-opus-9'), true);
  assert.equal(says(404, undefined, 'No endpoints found for acme/x.'), true);
  assert.equal(says(400, undefined, 'acme/x is not a valid model ID'), true);
  // Anthropic's other 404s name what is missing: a thread, a file
  assert.equal(says(404, 'not_found_error', 'thread.previous_message_id: no thread holds a message'), false);
  assert.equal(says(400, 'invalid_request_error', 'max_tokens: too large'), false);
  assert.equal(says(429, 'rate_limit_error', 'slow down'), false);
  assert.equal(says(401, 'authentication_error', 'model: x'), false);
});

describeEachEngine('GET /models availability from the store', postgres, (engine) => {
  engine.test(
    'a model is unavailable while its latest refusal is newer than its latest answer',
    async (t) => {
      const store = await openStore(await engine.target());
      t.after(() => store.close());
      const append = (prefix: string, events: Array<(id: string) => SeedEvent>) =>
        store.appendEvents(events.map((make, i) => eventRowOf(make(seqId(i, prefix)))));
      const gone = {
        status: 404,
        upstream_type: 'model_not_found',
        message: 'The model `x` does not exist.',
      };
      await append('01SEED', [
        answer('openai:gpt-5-mini', 1),
        failure('openai:gpt-5-mini', 2, gone),
        failure('anthropic:claude-opus-4-1', 3, {
          status: 404,
          upstream_type: 'not_found_error',
          message: 'model: claude-opus-4-1',
        }),
        answer('anthropic:claude-opus-4-1', 4),
        failure('anthropic:claude-haiku-4-5', 5, {
          status: 429,
          upstream_type: 'rate_limit_error',
          message: 'x',
        }),
      ]);
      const queries: CompiledQuery[] = [];
      const db =
        store.engine === 'sqlite'
          ? new Kysely<Database>({
              dialect: createNodeSqliteDialect(store.db),
              log: (e) => {
                if (e.level === 'query') queries.push(e.query);
              },
            })
          : store.kysely;
      let nowUs = BASE_US + 10;
      const view = createModelAvailabilityView({ db, clock: { nowUs: () => nowUs }, log: silentLogger });
      assert.deepEqual([...(await view.unavailableModels())], ['openai:gpt-5-mini']);

      // rows another process writes later: a refusal, and an answer that clears an earlier one
      await append('01LATER', [
        failure('openai:gpt-5', 20, gone),
        answer('openai:gpt-5-mini', 21),
        // a gateway client that left before any output: a completed call the model never answered
        (id) =>
          callEvent(id, { at: 22, model: 'openai:gpt-5', errorClass: 'cancelled', input: 0, output: 0 }),
      ]);
      nowUs = BASE_US + 30;
      assert.deepEqual([...(await view.unavailableModels())], ['openai:gpt-5']);
      if (store.engine !== 'sqlite') return;

      // each read is an index range, never a scan of the events table
      const reads = queries.filter((q) => /\bevents\b/.test(q.sql));
      assert.ok(reads.length >= 4, `${reads.length} reads`);
      for (const q of reads) {
        const plan = (
          store.db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.parameters as never[])) as Array<{
            detail: string;
          }>
        ).map((r) => r.detail);
        const shown = `${q.sql.replace(/\s+/g, ' ')}\n  plan: ${plan.join(' | ')}`;
        // the first read after a start takes every failed call: the whole partial index of failures, no other row
        const first = q === reads[0];
        assert.ok(
          plan.some((l) =>
            first
              ? l === 'SCAN events USING INDEX events_failed_call'
              : /^SEARCH events USING (COVERING )?INDEX events_(failed_call|spend) \(/.test(l),
          ),
          shown,
        );
        assert.ok(
          !plan.some((l) => /^SCAN events$|SCAN events USING (COVERING )?INDEX events_spend/.test(l)),
          shown,
        );
      }
    },
  );
});
