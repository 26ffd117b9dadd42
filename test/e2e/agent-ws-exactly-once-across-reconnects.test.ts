/**
 * The seam rule of spec 2 §WebSocket stream, as a property over random interleavings: while a turn streams
 * (text deltas, tool calls, model calls), a client drops its socket at random points (closing cleanly or
 * cutting it) and reconnects with `since` = the last event id it received. Across all its connections it
 * must receive every committed event exactly once, in id order, and no event twice.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { isPersisted } from '#src/events/catalog.ts';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { startFakeProvider } from '../fake-provider/server.ts';
import { startAgentServer, withStore } from '../helpers/agent-server.ts';
import { attach } from '../helpers/ws-client.ts';

const fake = await startFakeProvider();
after(() => fake.close());
const server = await startAgentServer({ after }, { env: fakeProviderEnv(fake, ['anthropic']) });

type Ev = { id: string; type: string; turn_id: string | null };

/** A small deterministic PRNG (mulberry32) so a failing seed can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A turn of `steps` model calls, each streaming words and two read-only tool calls, then a final answer. */
function scriptLongTurn(steps: number): void {
  const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
  fake.script([
    ...Array.from({ length: steps }, (_, i) => ({
      text: words(8, `s${i}w`),
      toolUses: [
        { name: 'list_files', input: {} },
        { name: 'read_file', input: { path: 'notes.txt' } },
      ],
      dripMs: 2,
    })),
    { text: words(30, 'end'), dripMs: 2 },
  ]);
}

/** One connection: subscribe with `since`, take `k` events (or up to the turn's end), then drop. */
async function segment(sid: string, since: string | null, k: number, cut: boolean) {
  const c = await attach(server, sid);
  c.send({ type: 'subscribe', filter: 'preset:full', since, snapshot: false });
  await c.next((f) => f.type === 'subscribe_ack');
  await c.next((f) => c.events().length >= k || (f.type === 'event' && f.event.type === 'turn.completed'));
  const got = c.events().slice() as Ev[];
  if (cut) c.ws.terminate();
  else c.close();
  await c.closed;
  return got;
}

for (const seed of [11, 23, 47]) {
  test(`seed ${seed}: reconnecting at random points receives every committed event once, in id order`, async () => {
    const random = rng(seed);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${server.workspace}/notes.txt`, 'notes\n');
    const sid = (await server.api('POST', '/sessions', { workspace_path: server.workspace })).body.id;
    scriptLongTurn(12);
    // the first connection is accepted before the turn, so nothing of it can be missed
    const first = await attach(server, sid);
    first.send({ type: 'subscribe', filter: 'preset:full' });
    await first.next((f) => f.type === 'subscribe_ack');
    const turn = await server.api('POST', `/sessions/${sid}/turns`, {
      content: [{ type: 'text', text: 'go' }],
    });
    assert.equal(turn.status, 202);
    await first.next(() => first.events().length >= 1 + Math.floor(random() * 10));
    const received: Ev[] = first.events().slice() as Ev[];
    first.ws.terminate();
    await first.closed;

    let reconnects = 0;
    while (!received.some((e) => e.type === 'turn.completed')) {
      const since = received.at(-1)?.id ?? null;
      received.push(...(await segment(sid, since, 1 + Math.floor(random() * 40), random() < 0.5)));
      reconnects++;
    }
    assert.ok(reconnects >= 3, `only ${reconnects} reconnects`);

    const ids = received.map((e) => e.id);
    assert.equal(new Set(ids).size, ids.length, 'an event arrived twice');
    assert.deepEqual(ids, [...ids].sort(), 'events out of id order');
    // the stream may deliver turn.completed a moment before the trace writer commits it
    const ended = received.find((e) => e.type === 'turn.completed')!.id;
    let committed: string[] = [];
    while (!committed.includes(ended)) {
      committed = withStore(server.db, (db) =>
        db.prepare('SELECT id FROM events WHERE session_id = ? ORDER BY id').all(sid),
      ).map((r) => (r as { id: string }).id);
      if (!committed.includes(ended)) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(committed.length > 60, `${committed.length} committed events`);
    assert.deepEqual(
      received.filter((e) => isPersisted(e.type as never)).map((e) => e.id),
      committed,
      `seed ${seed}: the persisted events received differ from the committed ones`,
    );
  });
}
