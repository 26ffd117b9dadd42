import { type Kysely, sql } from 'kysely';

/**
 * Frozen. `events_web_search`: the model calls that ran server-side web searches (`web_search_requests`
 * is on an llm.call_completed payload only when not zero), by time, with the model and the count. The
 * savings report re-prices those searches on both sides (each side's web_search price) and reads them
 * here: a handful of rows, where reading the count off every call's payload in the window would open
 * them all. Calls without searches never enter it. Imports nothing from src/.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of [
    sql`CREATE INDEX events_web_search ON events (
        timestamp_us, model, json_extract(payload, '$.web_search_requests')
      ) WHERE type = 'llm.call_completed' AND json_extract(payload, '$.web_search_requests') IS NOT NULL`,
    sql`PRAGMA user_version = 8`,
  ])
    await statement.execute(db);
}
