/**
 * Per-user export and forget on both engines: the export returns the subject's rows in id order, exactly
 * as stored; forget rewrites every location of the id in place (no row deleted, neighbours untouched),
 * leaves no row holding the id, and a repeat rewrites nothing. A payload holding the escape \u0000 (a provider's
 * error message; PostgreSQL's json reads cannot take it) keeps it, and a U+FFFD beside it, through the rewrite.
 * On PostgreSQL the planner's statistics (pg_stats, readable by any role that may read events) no longer
 * hold the id either. A forget meeting an export's audit record is serialised with it, never between
 * its decision of whom the record names and its insert.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { sql } from 'kysely';
import { pseudonymFor, runForgetUser, runUserExport } from '#src/analytics/index.ts';
import { readForgetSalt } from '#src/analytics/user-data/pseudonym.ts';
import { createBus } from '#src/events/bus.ts';
import { createTraceWriter } from '#src/events/trace-writer.ts';
import { createIdFactory } from '#src/lib/ids.ts';
import { silentLogger } from '#src/lib/log.ts';
import { formatUs, systemClock } from '#src/lib/time.ts';
import { openStore } from '#src/store/open.ts';
import type { NewEventRow } from '#src/store/schema.ts';
import { describeEachEngine } from '../../helpers/engines.ts';
import { BASE_US, callPayload, seqId } from '../../helpers/event-rows.ts';
import { useTestPostgres } from '../../helpers/postgres.ts';

const postgres = useTestPostgres();

describeEachEngine('user export and forget', postgres, (engine) => {
  const { test } = engine;

  async function setup(t: TestContext) {
    const store = await openStore(await engine.target());
    const bus = createBus({ newId: createIdFactory(), clock: systemClock, log: silentLogger });
    const writer = createTraceWriter({ store, log: silentLogger });
    bus.subscribe(writer.subscriber);
    t.after(async () => {
      await writer.stop();
      await store.close();
    });
    const users = ['u1', 'u10', 'U1', 'u1', null];
    const rows: NewEventRow[] = Array.from({ length: 40 }, (_, i) =>
      row(i, i % 2 ? 'llm.call_completed' : 'tool.failed', callPayload(users[i % users.length], { seq: i })),
    );
    rows.push(
      // NUL, a U+FFFD and a backslash followed by u0000 (text, not the escape): all kept as they were
      row(
        102,
        'llm.call_failed',
        callPayload('u1', { error_class: 'invalid_request', message: 'bad\u0000nul \uFFFD \\u0000 u1' }),
      ),
      row(100, 'quota.alert', {
        identity_kind: 'user',
        identity_id: 'u1',
        gateway_key_id: 'gk_1',
        user_id: null,
      }),
      row(101, 'quota.alert', {
        identity_kind: 'key',
        identity_id: 'u1',
        gateway_key_id: 'gk_1',
        user_id: null,
      }),
    );
    await store.appendEvents(rows.reverse()); // inserted out of order: the export sorts by id
    return { store, deps: { store, bus, clock: systemClock } };
  }

  test('the export streams exactly the subject rows in id order, payloads as stored', async (t) => {
    const { store, deps } = await setup(t);
    let text = '';
    const summary = await runUserExport(
      { ...deps, pageSize: 7 },
      { userId: 'u1', window: { startUs: null, endUs: null } },
      (chunk) => {
        text += chunk;
      },
    );
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(summary.rowCount, 17);
    assert.deepEqual(
      lines.map((l) => l.id),
      lines.map((l) => l.id as string).sort(),
    );
    for (const l of lines) assert.equal((l.payload as { user_id: string }).user_id, 'u1');
    const stored = await store.kysely
      .selectFrom('events')
      .select('payload')
      .where('id', '=', seqId(0))
      .executeTakeFirst();
    assert.equal(JSON.stringify(lines.find((l) => l.id === seqId(0))?.payload), stored?.payload);
  });

  test('a forget starting once an export decided whom its audit record names waits for it, then rewrites it', async (t) => {
    const { store, deps } = await setup(t);
    let forget: Promise<unknown> | undefined;
    const bus: typeof deps.bus = {
      ...deps.bus,
      stamp(input) {
        forget ??= runForgetUser({ ...deps, scrub: false }, 'u1'); // svc user forget u1, meanwhile
        return deps.bus.stamp(input);
      },
    };
    const s = await runUserExport(
      { store, bus },
      { userId: 'u1', window: { startUs: null, endUs: null } },
      () => {},
    );
    assert.ok(forget, 'the export stamped its audit record');
    await forget;
    const raw = await store.kysely.selectFrom('events').select('type').where('user_id', '=', 'u1').execute();
    assert.deepEqual(raw, [], 'no row holds the forgotten id');
    const audit = await store.kysely
      .selectFrom('events')
      .select('user_id')
      .where('id', '=', s.auditEventId)
      .executeTakeFirstOrThrow();
    assert.match(audit.user_id ?? '', /^redacted_/);
  });

  test('forget rewrites every location in place; no row holds the id afterwards; a repeat rewrites 0', async (t) => {
    const { store, deps } = await setup(t);
    const before = await store.kysely.selectFrom('events').select(['id', 'payload']).orderBy('id').execute();
    // what autovacuum does on its own: the sampled values of user_id and payload go into pg_statistic
    if (engine.name === 'postgres') await sql`ANALYZE events`.execute(store.kysely);
    const r = await runForgetUser(deps, 'u1');
    const salt = await readForgetSalt(store.kysely);
    assert.equal(r.pseudonym, pseudonymFor(salt as string, 'u1'));
    assert.equal(r.pseudonymized_rows, 18); // 17 payload user_id + 1 per-user quota event
    const after = await store.kysely
      .selectFrom('events')
      .select(['id', 'payload', 'user_id'])
      .orderBy('id')
      .execute();
    const kept = after.filter((a) => before.some((b) => b.id === a.id));
    assert.equal(kept.length, before.length, 'no row deleted');
    const holding = after.filter((a) => a.payload.includes('"u1"') || a.user_id === 'u1');
    assert.equal(holding.length, 1, 'only the key-kind quota event, whose identity_id is a key id');
    for (const b of before) {
      const a = after.find((x) => x.id === b.id);
      const old = JSON.parse(b.payload) as Record<string, unknown>;
      const now = JSON.parse(a?.payload ?? '{}') as Record<string, unknown>;
      if (old.user_id === 'u1') assert.deepEqual(now, { ...old, user_id: r.pseudonym });
      else if (old.identity_kind === 'user') assert.deepEqual(now, { ...old, identity_id: r.pseudonym });
      else assert.deepEqual(now, old, 'others untouched');
    }
    if (engine.name === 'postgres') {
      const stats = await sql<{ attname: string; vals: string | null }>`SELECT attname,
          concat(most_common_vals::text, ' ', histogram_bounds::text) AS vals
        FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'events'`.execute(store.kysely);
      const sampled = (col: string) => stats.rows.find((x) => x.attname === col)?.vals ?? '';
      assert.match(sampled('user_id'), /redacted_/, 'the statistics were taken again');
      assert.doesNotMatch(sampled('user_id'), /(^|[^A-Za-z0-9_-])u1([^A-Za-z0-9_-]|$)/);
      // (the key-kind quota event's identity_id "u1" is a key id, which stays)
      assert.equal(sampled('payload').includes('user_id\\":\\"u1\\"'), false, 'a sampled payload names u1');
    }
    const again = await runForgetUser(deps, 'u1');
    assert.equal(again.pseudonymized_rows, 0);
  });
});

// --- internal ---

function row(i: number, type: string, payload: Record<string, unknown>): NewEventRow {
  return {
    id: seqId(i),
    timestamp: formatUs(BASE_US + i),
    timestamp_us: BASE_US + i,
    session_id: null,
    turn_id: `turn_${i}`,
    type,
    actor: 'gateway',
    payload: JSON.stringify(payload),
    parent_event_id: null,
    sensitivity: 'pseudonymous',
  };
}
