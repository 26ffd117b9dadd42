/**
 * @module PostgreSQL's counterparts of read-paths.ts: the same names read from events.payload_json (the
 * generated json column of PostgreSQL migration 0001) and the generated text columns. JSON numbers are
 * read only where they are numbers (a string or object reads as NULL, as the SQLite sums skip it), so no
 * payload can make a cast fail the query; an integer index is one JSON integer, as SQLite's typeof says.
 */
import type { EXPR } from './read-paths.ts';

const number = (key: string) =>
  `CASE WHEN json_typeof(payload_json -> '${key}') = 'number' THEN (payload_json ->> '${key}')::numeric END`;

const WINNER_INDEX = `CASE WHEN json_typeof(payload_json -> 'winner_index') = 'number' AND (payload_json ->> 'winner_index') ~ '^-?[0-9]{1,18}$' THEN (payload_json ->> 'winner_index')::bigint END`;
const CHAIN_LENGTH = `CASE WHEN json_typeof(payload_json -> 'chain') = 'array' THEN json_array_length(payload_json -> 'chain') END`;

/** EXPR, key for key, on PostgreSQL. costNano is unused there: every cost is summed as NUMERIC. */
export const PG_EXPR: Record<keyof typeof EXPR, string> = {
  hour: 'timestamp_us / 3600000000',
  costNano: 'NULL::bigint',
  inputTokens: number('input_tokens'),
  outputTokens: number('output_tokens'),
  cachedInputTokens: number('cached_input_tokens'),
  cacheCreationInputTokens: number('cache_creation_input_tokens'),
  latencyMs: number('latency_ms'),
  parentSessionId: "(payload_json ->> 'parent_session_id')",
  inboundShape: "(payload_json ->> 'inbound_shape')",
  winnerIndex: WINNER_INDEX,
  chainLength: CHAIN_LENGTH,
  winnerPolicy: `CASE WHEN (${WINNER_INDEX}) >= 0 AND (${WINNER_INDEX}) < (${CHAIN_LENGTH}) THEN payload_json -> 'chain' -> (${WINNER_INDEX})::int ->> 'policy' END`,
  chosenModel: "(payload_json ->> 'chosen_model')",
  mayHoldRejection: `strpos(payload, '"rejected"') > 0`,
};
