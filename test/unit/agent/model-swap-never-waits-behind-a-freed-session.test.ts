/**
 * A model swap (PATCH /sessions/:id) that saw the session's turn running is queued for the turn boundary;
 * the turn's end applies the queue, then frees the session. A PATCH landing between those two steps used
 * to queue behind a session already past its apply: the swap stayed queued, and the next turn ran on the
 * old model. The test holds the turn end's read of the queue until the PATCH has read the session.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult } from 'kysely';
import { createKeyedLock } from '#src/lib/keyed-lock.ts';
import { type AgentHarness, startAgentHarness } from '../../helpers/agent-harness.ts';

/**
 * Calls `during` once armed, inside the first SELECT of sessions.queued_swap, while that read still holds
 * the store's one connection: whatever `during` asks of the store runs before the turn end's next step.
 */
function onQueueRead() {
  const queueReads = new WeakSet<object>();
  let during: (() => void) | undefined;
  const plugin: KyselyPlugin = {
    transformQuery(args: PluginTransformQueryArgs) {
      if (args.node.kind === 'SelectQueryNode' && JSON.stringify(args.node).includes('"queued_swap"'))
        queueReads.add(args.queryId);
      return args.node;
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<any>> {
      if (during && queueReads.has(args.queryId)) {
        const run = during;
        during = undefined;
        run();
      }
      return args.result;
    },
  };
  return { plugin, arm: (fn: () => void) => (during = fn) };
}

const hold = onQueueRead();
let h: AgentHarness;
before(async () => {
  h = await startAgentHarness({ enginePlugin: hold.plugin });
});
after(() => h.close());

test('a swap that meets the turn between its queue read and its release is applied, not left queued', async () => {
  const s = await h.newSession({ active_model: 'anthropic:claude-sonnet-4-5' });
  h.fake.script([{ text: 'done' }]);
  let swap: Promise<{ active_model: string }> | undefined;
  // the turn's end has just read an empty queue and not yet freed the session: the PATCH reads it now
  hold.arm(() => {
    swap = h.engine.setActiveModel(s.id, 'openai:gpt-5-mini');
  });
  const submitted = await h.engine.submit({ sessionId: s.id, content: [{ type: 'text', text: 'hi' }] });
  await h.turnEnd(submitted.turn_id);
  assert.ok(swap, 'the PATCH ran during the turn end');
  const swapped = await swap;
  const row = await h.store.kysely
    .selectFrom('sessions')
    .select(['active_model', 'queued_swap', 'current_turn_id', 'sticky'])
    .where('id', '=', s.id)
    .executeTakeFirstOrThrow();
  assert.deepEqual(
    { ...row },
    { active_model: 'openai:gpt-5-mini', queued_swap: 0, current_turn_id: null, sticky: 1 },
    'the next turn runs on the model asked for',
  );
  assert.equal(swapped.active_model, 'openai:gpt-5-mini');
});

test('the keyed lock runs one task at a time per key, in call order, and a failure does not block the next', async () => {
  const lock = createKeyedLock();
  const order: string[] = [];
  let open: () => void = () => {};
  const gate = new Promise<void>((r) => {
    open = r;
  });
  const a = lock.run('s', async () => {
    order.push('a start');
    await gate;
    order.push('a end');
    throw new Error('a failed');
  });
  const b = lock.run('s', async () => {
    order.push('b');
    return 2;
  });
  const other = lock.run('t', async () => {
    order.push('other key');
    return 3;
  });
  assert.equal(await other, 3);
  open();
  await assert.rejects(a, /a failed/);
  assert.equal(await b, 2);
  assert.deepEqual(order, ['a start', 'other key', 'a end', 'b']);
});
