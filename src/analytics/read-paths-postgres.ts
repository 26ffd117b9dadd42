/**
 * @module PostgreSQL's counterparts of read-paths.ts: the same names read from each row's payload (its
 * \u0000 escapes read as \ufffd, PG_PAYLOAD) as jsonb `j`, and the generated text columns.
 * Parsing it once per row is about 3.5× faster than the json column read per expression. JSON numbers are
 * read only where they are numbers (a string or object reads as NULL, as the SQLite sums skip it), so no
 * payload can make a cast fail the query; an integer index is one JSON integer, as SQLite's typeof says.
 */
import type { EXPR } from './read-paths.ts';

/**
 * An event's payload text as PostgreSQL's json reads it: json and jsonb refuse to extract anything from a
 * payload holding the escape \u0000 (a provider's error message, a stop reason or a model name a client
 * sent may carry NUL), which would fail the whole report, so it is read as \ufffd, as the generated
 * columns of migration 0001 read it. payload_json (payload::json) is never read for that reason.
 */
export const PG_PAYLOAD = String.raw`replace(payload, '\u0000', '\ufffd')`;

/**
 * `FROM events` with each row's payload as jsonb `j`, parsed once per row (OFFSET 0 keeps the lateral
 * from being inlined, which would parse the payload again for every expression that reads it).
 */
export const PG_EVENTS = `events CROSS JOIN LATERAL (SELECT ${PG_PAYLOAD}::jsonb AS j OFFSET 0) AS parsed`;

const number = (key: string) =>
  `CASE WHEN jsonb_typeof(j -> '${key}') = 'number' THEN (j ->> '${key}')::numeric END`;

const WINNER_INDEX = `CASE WHEN jsonb_typeof(j -> 'winner_index') = 'number' AND (j ->> 'winner_index') ~ '^-?[0-9]{1,18}$' THEN (j ->> 'winner_index')::bigint END`;
const CHAIN_LENGTH = `CASE WHEN jsonb_typeof(j -> 'chain') = 'array' THEN jsonb_array_length(j -> 'chain') END`;

/** EXPR, key for key, on PostgreSQL. costNano is unused there: every cost is summed as NUMERIC. */
export const PG_EXPR: Record<keyof typeof EXPR, string> = {
  hour: 'timestamp_us / 3600000000',
  costNano: 'NULL::bigint',
  inputTokens: number('input_tokens'),
  outputTokens: number('output_tokens'),
  cachedInputTokens: number('cached_input_tokens'),
  cacheCreationInputTokens: number('cache_creation_input_tokens'),
  latencyMs: number('latency_ms'),
  parentSessionId: "(j ->> 'parent_session_id')",
  inboundShape: "(j ->> 'inbound_shape')",
  winnerIndex: WINNER_INDEX,
  chainLength: CHAIN_LENGTH,
  winnerPolicy: `CASE WHEN (${WINNER_INDEX}) >= 0 AND (${WINNER_INDEX}) < (${CHAIN_LENGTH}) THEN j -> 'chain' -> (${WINNER_INDEX})::int ->> 'policy' END`,
  chosenModel: "(j ->> 'chosen_model')",
  mayHoldRejection: `strpos(payload, '"rejected"') > 0`,
};
