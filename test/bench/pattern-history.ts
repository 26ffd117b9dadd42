/**
 * A synthetic trace history for timing slot 4's rebuild at scale: `requests` gateway requests, each with
 * route.decided (its real fingerprints), llm.call_started, llm.call_completed and turn.completed, spread
 * over the last 14 days, 12 request shapes, five keys and three models, 4 % of them failed.
 */
import { DatabaseSync } from 'node:sqlite';
import { fingerprintRequest } from '#src/routing/pattern/fingerprint.ts';
import { BUSY_TIMEOUT_MS } from '#src/store/open.ts';
import { insertEvents, type SeedEvent, seedStore } from '../helpers/event-rows.ts';
import { facts } from '../unit/routing/routing-fixture.ts';

const MODELS = ['anthropic:claude-haiku-4-5', 'anthropic:claude-sonnet-4-5', 'openai:gpt-5-mini'];
const VERBS = ['fix', 'summarize', 'explain', 'refactor', 'review', 'document'];
const NOUNS = ['parser', 'billing', 'session', 'router', 'cache', 'exporter', 'scheduler', 'checkout'];

/** Creates the store at `path` and returns the number of events written. */
export async function seedSyntheticHistory(path: string, requests: number): Promise<number> {
  const now = Date.now() * 1000;
  const span = 14 * 86_400_000_000;
  let written = 0;
  const batch = 20_000;
  const makeBatch = (from: number) => {
    const events: SeedEvent[] = [];
    for (let i = from; i < Math.min(requests, from + batch); i++) {
      const shape = i % 12;
      const f = facts({
        workspacePath: `/srv/team-${shape % 3}`,
        hasTools: shape % 2 === 0,
        toolNames: shape % 2 === 0 ? ['read_file', 'run_command'] : [],
        estimatedInputTokens: 200 * (1 + (shape % 4)),
        messageCount: 1 + (i % 5),
      });
      const text = `${VERBS[i % VERBS.length]} the ${NOUNS[(i >> 3) % NOUNS.length]} module ${i % 97}`;
      const model = MODELS[i % MODELS.length];
      const failed = i % 25 === 0;
      const at = now - span + Math.floor((i / requests) * span);
      const turn = `turn${String(i).padStart(12, '0')}`;
      const key = `gk_${i % 5}`;
      const ev = (k: number, type: string, payload: Record<string, unknown>) =>
        events.push({
          id: `01SCALE${String(i * 4 + k).padStart(19, '0')}`,
          timestamp_us: at + k,
          type,
          turn_id: turn,
          payload,
        });
      ev(0, 'route.decided', {
        chain: [{ policy: 'per_message_override', model, verdict: 'accepted' }],
        winner_index: 0,
        chosen_model: model,
        elapsed_ms: 0.02,
        gateway_key_id: key,
        fingerprint: fingerprintRequest(f, text),
      });
      ev(1, 'llm.call_started', { model, gateway_key_id: key });
      ev(2, failed ? 'llm.call_failed' : 'llm.call_completed', {
        model,
        gateway_key_id: key,
        cost_usd: '0.0012',
        error_class: failed ? 'server_error' : null,
      });
      ev(3, 'turn.completed', {
        gateway_key_id: key,
        status: failed ? 502 : 200,
        error_code: failed ? 'upstream_error' : null,
        cost_usd: failed ? '0' : '0.0012',
      });
    }
    return events;
  };
  await seedStore(path, 0, () => undefined as never); // created and migrated by the real openStore
  const db = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    for (let from = 0; from < requests; from += batch) {
      const events = makeBatch(from);
      insertEvents(db, events.length, (k) => events[k]);
      written += events.length;
    }
  } finally {
    db.close();
  }
  return written;
}
