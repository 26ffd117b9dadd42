/**
 * @module Session rows as the REST API shows them (spec 2 Resources: Session). Money is summed exactly in
 * the store and emitted as a JSON number (the spec's type), like the analytics endpoints.
 */
import { parseDecimal, toNumber } from '../../lib/decimal.ts';
import type { SessionRow } from '../../store/schema.ts';

/** GET /sessions entries. */
export function encodeSessionSummary(row: SessionRow) {
  return {
    id: row.id,
    workspace_path: row.workspace_path,
    active_model: row.active_model,
    created_at: row.created_at,
    updated_at: row.updated_at,
    turn_count: row.turn_count,
    cost_so_far_usd: toNumber(parseDecimal(row.cost_so_far_usd)),
    is_worker: row.is_worker === 1,
    parent_session_id: row.parent_session_id,
    ended_at: row.ended_at,
  };
}

/** GET /sessions/{id} (without the attach token and ws_url, which the route adds). */
export function encodeSession(row: SessionRow) {
  return {
    ...encodeSessionSummary(row),
    routing_policy_version: row.routing_policy_version,
    current_turn_id: row.current_turn_id,
    current_turn_status: row.current_turn_status as 'in_flight' | null,
  };
}
