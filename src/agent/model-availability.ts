/**
 * @module Which models the provider said it does not have (GET /models `availability: model_unavailable`):
 * a model whose latest such refusal in the trace store (an `llm.call_failed` of the agent server or of any
 * gateway writing the same store) is later than its latest answered `llm.call_completed` (not one a client
 * left before any output). Read from the store, never
 * from this process alone: the first read after a start takes every failed call (partial index
 * `events_failed_call`; failures are few) and the completed calls since the oldest refusal (the spend
 * index); each later read takes only the events since the previous one, less a margin for other
 * processes' rows that commit late.
 */
import { type Kysely, sql } from 'kysely';
import { expr, fromSpend } from '../analytics/read-paths.ts';
import { errorMessage } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import type { Clock } from '../lib/time.ts';
import { engineOfKysely } from '../store/dialect.ts';
import type { Database } from '../store/schema.ts';

export interface ModelAvailabilityView {
  /** Ids of the models whose provider refused the latest call as an unknown or inaccessible model. */
  unavailableModels(): Promise<ReadonlySet<string>>;
}

/** Rows another process stamped up to this long before they commit are still seen by the next read. */
const LATE_COMMIT_MARGIN_US = 120_000_000;

export function createModelAvailabilityView(deps: {
  db: Kysely<Database>;
  clock: Clock;
  log: Logger;
  /** Commits this process's queued trace events first, so a turn that just failed counts. */
  flushEvents?: () => Promise<void>;
}): ModelAvailabilityView {
  const refusedAt = new Map<string, number>();
  const answeredAt = new Map<string, number>();
  /** Where the next read starts (null: nothing read yet). */
  let readFromUs: number | null = null;
  let running: Promise<void> | null = null;

  let away = false;

  const refresh = async (): Promise<void> => {
    // a store that does not answer fails here at once, not after the trace writer's retry window
    await sql`SELECT 1`.execute(deps.db);
    await deps.flushEvents?.();
    const nowUs = deps.clock.nowUs();
    const refusals = await readRefusals(deps.db, readFromUs);
    // the first read needs the completed calls only back to the oldest refusal it found
    const oldest = refusals.reduce((min, r) => Math.min(min, r.atUs), Number.POSITIVE_INFINITY);
    const answersFrom = readFromUs ?? (Number.isFinite(oldest) ? oldest : null);
    const answers =
      readFromUs !== null || answersFrom !== null ? await readAnswers(deps.db, answersFrom ?? 0) : [];
    // the view changes only once both reads succeeded: refusals without the answers since would show a
    // model refused long ago, and answered since, as unavailable until the next read
    for (const r of refusals) raise(refusedAt, r.model, r.atUs);
    for (const r of answers) raise(answeredAt, r.model, r.atUs);
    readFromUs = nowUs - LATE_COMMIT_MARGIN_US;
  };

  return {
    async unavailableModels() {
      // concurrent requests share one read
      running ??= refresh()
        .then(() => {
          if (away) deps.log.info('GET /models reads model availability from the store again');
          away = false;
        })
        .catch((err: unknown) => {
          // the last view read stands (a provider key's absence is still shown)
          if (!away)
            deps.log.warn(
              'GET /models cannot read model availability from the store; it shows the last one read',
              {
                message: errorMessage(err),
              },
            );
          away = true;
        })
        .finally(() => {
          running = null;
        });
      await running;
      const out = new Set<string>();
      for (const [model, atUs] of refusedAt) if (atUs > (answeredAt.get(model) ?? -1)) out.add(model);
      return out;
    },
  };
}

/**
 * Whether a failed call's payload is the provider saying the model does not exist or is not open to the
 * key: OpenAI's `model_not_found` (404, or 400/403 for a model the key may not use), Anthropic's 404
 * `not_found_error` naming the model (`model: …`; its other 404s name a thread or file), and OpenRouter's
 * 404 without a type ("No endpoints found for …") or 400 "… is not a valid model ID".
 */
export function saysModelUnavailable(payload: Record<string, unknown>): boolean {
  const type = payload.upstream_type;
  const message = typeof payload.message === 'string' ? payload.message : '';
  if (type === 'model_not_found') return true;
  if (payload.status === 404 && type === 'not_found_error') return message.startsWith('model:');
  if (payload.status === 404 && type === undefined) return true;
  return payload.status === 400 && /is not a valid model id/i.test(message);
}

// --- internal ---

interface ModelTime {
  model: string;
  atUs: number;
}

function raise(map: Map<string, number>, model: string, atUs: number): void {
  if (atUs > (map.get(model) ?? -1)) map.set(model, atUs);
}

/** The failed calls since `fromUs` (all when null) that say their model is unavailable. */
async function readRefusals(db: Kysely<Database>, fromUs: number | null): Promise<ModelTime[]> {
  const sqlite = engineOfKysely(db) === 'sqlite';
  const from = sqlite ? sql`events INDEXED BY events_failed_call` : sql`events`;
  const since = fromUs === null ? sql`TRUE` : sql`timestamp_us >= ${fromUs}`;
  const r = await sql<{ model: string | null; timestamp_us: number | string; payload: string }>`
    SELECT model, timestamp_us, payload FROM ${from}
    WHERE type = 'llm.call_failed' AND ${since}`.execute(db);
  const out: ModelTime[] = [];
  for (const row of r.rows) {
    if (row.model === null) continue;
    let payload: unknown;
    try {
      payload = JSON.parse(row.payload);
    } catch {
      continue;
    }
    if (
      typeof payload === 'object' &&
      payload !== null &&
      saysModelUnavailable(payload as Record<string, unknown>)
    )
      out.push({ model: row.model, atUs: Number(row.timestamp_us) });
  }
  return out;
}

/** Each model's latest completed call since `fromUs`, from the spend index alone. */
async function readAnswers(db: Kysely<Database>, fromUs: number): Promise<ModelTime[]> {
  const engine = engineOfKysely(db);
  const window = { startUs: fromUs, endUs: null };
  // a gateway client that left before any output is a completed call `cancelled` the model never answered
  const errorClass = sql.raw(
    engine === 'sqlite' ? "json_extract(payload, '$.error_class')" : "(j ->> 'error_class')",
  );
  const answered = sql`(${errorClass} IS NULL OR ${expr('outputTokens', engine)} > 0)`;
  // LIMIT -1 keeps SQLite reading the inner rows as a separate co-routine (see read-paths.ts spendRows)
  const limit = engine === 'sqlite' ? sql` LIMIT -1` : sql``;
  const r = await sql<{ model: string | null; at_us: number | string }>`
    SELECT model, MAX(ts) AS at_us
    FROM (SELECT model, timestamp_us AS ts ${fromSpend(window, engine)} AND ${answered}${limit}) AS answers
    GROUP BY model`.execute(db);
  return r.rows.flatMap((row) => (row.model === null ? [] : [{ model: row.model, atUs: Number(row.at_us) }]));
}
