/**
 * The dashboard's session view in a real browser: clicking a session lists its 20 newest turns, newest
 * first, however many turns it has. The events endpoint pages oldest first (1,000 at most per page), so a
 * session of more than a page must be read to its last page; it used to list the 20 last of the first page,
 * old turns shown as the newest. When the server is gone the list says so. In a 900 px window the sessions
 * table (an id, a path, a time, none with a space to break at) stays inside its card.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { openStore } from '#src/store/open.ts';
import { startAgentServer } from '../helpers/agent-server.ts';
import { chromiumSkipReason, launchChromium, recordProblems } from '../helpers/browser.ts';
import { BASE_US, insertEvents, seqId } from '../helpers/event-rows.ts';
import { makeTempDir } from '../helpers/svc.ts';

const skip = chromiumSkipReason();
const TURNS = 1_234;
const SESSION = 'sess_01M8KPW1AVH483SRS4KTSKEX80'; // a real id's length: the table must hold it
const turnId = (i: number) => `turn_${String(i).padStart(5, '0')}`;

test('a session of more than one page of turns lists its 20 newest, newest first', { skip }, async (t) => {
  const tmp = makeTempDir('svc-pages-turns-');
  t.after(() => tmp.cleanup());
  const store = await openStore(join(tmp.dir, 'svc.db'));
  try {
    const at = new Date(BASE_US / 1000).toISOString();
    store.db
      .prepare(
        `INSERT INTO sessions (id, workspace_path, active_model, created_at, updated_at, routing_policy_version, turn_count, cost_so_far_usd)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(SESSION, tmp.dir, 'anthropic:claude-sonnet-4-5', at, at, 'v1', TURNS, '0.0067512');
    insertEvents(store.db, TURNS, (i) => ({
      id: seqId(i),
      timestamp_us: BASE_US + i * 1_000_000,
      type: 'turn.started',
      actor: 'agent',
      session_id: SESSION,
      turn_id: turnId(i),
      payload: {},
    }));
  } finally {
    await store.close();
  }
  const server = await startAgentServer(t, { home: tmp.dir });
  const browser = await launchChromium(t);
  // a browser window of 900 px (half a laptop screen): the sessions table stays inside its card
  const page = await browser.newPage({ viewport: { width: 900, height: 800 } });
  page.setDefaultTimeout(10_000);
  const problems = recordProblems(page);
  await page.goto(`${server.url}/dashboard/`);
  await page.getByRole('tab', { name: 'Activity' }).click();
  await page.locator(`button[data-session="${SESSION}"]`).click();
  await page.locator('#session-turns ul.turns').waitFor();
  const overflow = await page
    .locator('section')
    .evaluateAll((els) =>
      els.filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.querySelector('h2')?.textContent),
    );
  assert.deepEqual(overflow, [], 'no table is wider than its card');
  assert.equal(await page.locator('html').evaluate((e) => e.scrollWidth), 900, 'no sideways scroll');
  const listed = await page.locator('#session-turns button[data-turn]').allInnerTexts();
  const newest = Array.from({ length: 20 }, (_, k) => turnId(TURNS - 1 - k));
  assert.deepEqual(listed, newest);
  assert.deepEqual(problems, []);

  // the server gone meanwhile: the list says so instead of failing silently (an uncaught page error)
  await page.route('**/sessions/**', (route) => route.abort('connectionrefused'));
  await page.locator(`button[data-session="${SESSION}"]`).click();
  await page.locator('#session-turns .error').waitFor();
  assert.match(
    await page.locator('#session-turns').innerText(),
    /^svc serve did not answer; is it running\?/,
  );
  assert.deepEqual(
    (problems as string[]).filter((p) => !p.includes('ERR_CONNECTION_REFUSED')),
    [],
  );
});
