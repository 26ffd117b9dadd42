/**
 * @module A gateway request's turn: its turn.completed, published once whichever way the request ends (the
 * request log's error_code too), the call scope its events are stamped with, and the budget hold that
 * stamps the settled cost on it.
 */
import type { Context } from 'hono';
import type { Bus, Published } from '../events/bus.ts';
import type { InboundShape as ShapeName } from '../events/catalog.ts';
import { type Decimal, formatDecimal, ZERO } from '../lib/decimal.ts';
import type { ErrorCode } from '../lib/errors.ts';
import type { CallScope, Hold } from '../llm/runner.ts';
import type { GatewayEnv } from './env.ts';
import type { KeyRecord } from './keystore/keystore.ts';

export interface Turn {
  readonly id: string;
  readonly shape: ShapeName;
  requestedModel: string | null;
  model: string | null;
  provider: string | null;
  cost: string;
  /** The routing estimate (request-facts.ts), for clients that want an input count before the upstream's. */
  inputTokensEstimate: number;
  finished: boolean;
  /** Publishes turn.completed once (later calls return the first publication). */
  finish(status: number, errorCode: string | null): Published;
}

/**
 * The request's turn. Its end's error code is also the request log's `error_code`: a stream that fails after
 * its 200 (or whose client leaves) is logged when it ends, with the code its turn.completed records.
 */
export function createTurn(
  bus: Bus,
  c: Context<GatewayEnv>,
  key: KeyRecord,
  shape: ShapeName,
  startedMs: number,
): Turn {
  const id = c.get('requestId');
  let published: Published | undefined;
  const turn: Turn = {
    id,
    shape,
    requestedModel: null,
    model: null,
    provider: null,
    cost: formatDecimal(ZERO),
    inputTokensEstimate: 0,
    finished: false,
    finish(status, errorCode) {
      if (published) return published;
      turn.finished = true;
      if (errorCode !== null) c.set('errorCode', errorCode as ErrorCode);
      published = bus.publish({
        type: 'turn.completed',
        actor: 'gateway',
        turn_id: id,
        payload: {
          gateway_key_id: key.key_id,
          inbound_shape: shape,
          user_id: key.user_id ?? null,
          team_id: key.team_id ?? null,
          requested_model: turn.requestedModel,
          model: turn.model,
          provider: turn.provider,
          status,
          error_code: errorCode,
          cost_usd: turn.cost,
          latency_ms: Math.round((performance.now() - startedMs) * 1000) / 1000,
        },
      });
      return published;
    },
  };
  return turn;
}

/** Who the gateway calls for: stamped on route.decided and llm.call_* (the agent passes its session). */
export function scopeOf(key: KeyRecord, turn: Turn): CallScope {
  return {
    actor: 'gateway',
    turnId: turn.id,
    sessionId: null,
    gatewayKeyId: key.key_id,
    inboundShape: turn.shape,
    userId: key.user_id ?? null,
    teamId: key.team_id ?? null,
    parentSessionId: null,
  };
}

/** The budget hold, also stamping the settled cost on turn.completed. */
export function costOnTurn(hold: Hold, turn: Turn, spent: (cost: Decimal) => void): Hold {
  return {
    settle(cost) {
      const written = hold.settle(cost);
      turn.cost = formatDecimal(cost);
      spent(cost);
      return written;
    },
    release: () => hold.release(),
  };
}
