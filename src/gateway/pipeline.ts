/**
 * @module One gateway call, top to bottom (STYLE: the data path): body → shape decode → CanonicalRequest →
 * routing chain (route.decided) → budget admission (worst case reserved) → adapter request (same wire: the
 * client's bytes with only `model` replaced) → llm/call.ts (retries, llm.call_*) → response or stream in
 * the client's shape → settle the budget → turn.completed. Every answer is sent only after its events are
 * committed to the trace store.
 */
import type { Context, Handler } from 'hono';
import type { Adapter } from '../adapters/adapter.ts';
import type { AdapterName } from '../adapters/registry.ts';
import { toSvcError } from '../adapters/upstream-error.ts';
import type { CanonicalRequest } from '../canonical/request.ts';
import { type CanonicalResponse, emptyUsage } from '../canonical/response.ts';
import type { Bus, Published } from '../events/bus.ts';
import type { CallAttribution, InboundShape as ShapeName } from '../events/catalog.ts';
import { clientGoneSignal, readBodyText } from '../http/incoming.ts';
import { type Decimal, formatDecimal, ZERO } from '../lib/decimal.ts';
import { isSvcError, SvcError } from '../lib/errors.ts';
import { assertJsonDepth } from '../lib/json-depth.ts';
import { rewriteModel } from '../lib/json-splice.ts';
import type { Logger } from '../lib/log.ts';
import { classifyReadFailure, type LlmCallDeps, LlmCallFailed, openLlmCall } from '../llm/call.ts';
import { readUpstreamText, type UpstreamLimits } from '../llm/upstream.ts';
import type { ModelEntry } from '../models/model-schema.ts';
import { worstCaseCost } from '../models/pricing.ts';
import { type ModelRegistry, splitCanonicalId } from '../models/registry.ts';
import { boundCallTokens } from '../models/token-bound.ts';
import { resolveRoute } from '../routing/chain.ts';
import type { RouteContext } from '../routing/facts.ts';
import type { PolicyStore } from '../routing/load-policy.ts';
import { describeRequest } from '../routing/request-facts.ts';
import type { GatewayEnv } from './env.ts';
import type { KeyRecord } from './keystore/keystore.ts';
import type { QuotaManager, Reservation } from './quota.ts';
import { pickAnthropicHeaders } from './shapes/anthropic/version.ts';
import { SHAPES } from './shapes/shapes.ts';
import { createStreamResponse } from './stream-response.ts';

export interface PipelineDeps {
  bus: Bus;
  log: Logger;
  registry: ModelRegistry;
  policy: PolicyStore;
  /** Adapters whose provider key is set. */
  adapters: Partial<Record<AdapterName, Adapter>>;
  llm: LlmCallDeps;
  quota: QuotaManager;
  maxBodyBytes: number;
  upstreamLimits: UpstreamLimits;
}

export interface Pipeline {
  /** POST /v1/messages */
  messages: Handler<GatewayEnv>;
  /** POST /v1/chat/completions */
  chatCompletions: Handler<GatewayEnv>;
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  const available = new Set(Object.keys(deps.adapters));
  const allowedSets = new WeakMap<KeyRecord, ReadonlySet<string> | null>();
  const allowedOf = (key: KeyRecord) => {
    let set = allowedSets.get(key);
    if (set === undefined) {
      set = key.allowed_models?.length ? new Set(key.allowed_models) : null;
      allowedSets.set(key, set);
    }
    return set;
  };

  const handle = (shapeName: ShapeName): Handler<GatewayEnv> => {
    const shape = SHAPES[shapeName];
    return async (c) => {
      const startedMs = performance.now();
      const signal = clientGoneSignal(c.req.raw, c.env);
      const key = c.get('gatewayKey');
      const turn = createTurn(deps.bus, c.get('requestId'), key, shapeName, startedMs);
      let reservation: Reservation | undefined;
      try {
        const bodyText = await readBodyText(c.req.raw, deps.maxBodyBytes, c.env);
        const body = parseJsonBody(bodyText);
        assertJsonDepth(body); // before anything recursive (decode, translation, routing facts) runs
        const req = shape.decode(body, anthropicHeaders(c));
        c.set('model', req.model);
        turn.requestedModel = req.model;

        const model = route(req, key, turn);
        const adapter = deps.adapters[model.adapter as AdapterName]!;
        turn.model = model.id;
        turn.provider = adapter.name;

        const worst = worstCaseCost(deps.registry, model.id, boundCallTokens(req, model, bodyText));
        reservation = deps.quota.admit(key, worst.cost, {
          requested_model: req.model,
          model: model.id,
          turn_id: turn.id,
        });

        const upstreamModel = splitCanonicalId(model.id)!.modelName;
        const sameWire = adapter.wire === shape.name;
        const call = sameWire
          ? adapter.encodePassthrough({
              bodyText,
              body: body as Record<string, unknown>,
              upstreamModel,
              stream: req.stream,
              headers: req.passthrough?.headers,
            })
          : adapter.encodeRequest(req, upstreamModel);
        const attribution = attributionOf(req, model, adapter, key, shapeName);
        const open = await openLlmCall(deps.llm, {
          adapter,
          model,
          call,
          attribution,
          stream: req.stream,
          turnId: turn.id,
          signal,
        });
        const held = reservation;
        const settle = (cost: Decimal) => {
          held.settle(cost);
          turn.cost = formatDecimal(cost);
        };

        if (req.stream) {
          return createStreamResponse({
            adapter,
            shape,
            sameWire,
            body: open.response.body,
            requestedModel: req.model,
            includeUsage: req.include_usage,
            inputTokensEstimate: turn.inputTokensEstimate,
            maxSseLineBytes: deps.upstreamLimits.maxSseLineBytes,
            signal,
            startedMs: performance.now() - open.elapsedMs(), // ttft_ms counts from the call's start
            headers: { 'svc-request-id': turn.id },
            ends: {
              ok: async (usage, stopReason, ttftMs) => {
                const { published, cost } = open.complete({ usage, stopReason, ttftMs });
                settle(cost.cost);
                await Promise.all([published.committed, turn.finish(200, null).committed]);
              },
              failed: async (failure) => {
                held.release();
                const published = open.fail(failure);
                await Promise.all([published.committed, turn.finish(200, failure.code).committed]);
              },
              cancelled: (usage, ttftMs) => {
                const { cost } = open.complete({ usage, stopReason: null, cancelled: true, ttftMs });
                settle(cost.cost);
                turn.finish(499, 'cancelled');
              },
            },
          });
        }

        let text: string;
        let decoded: CanonicalResponse;
        try {
          text = await readUpstreamText(open.response, deps.upstreamLimits.maxBodyBytes);
          decoded = adapter.decodeResponse(JSON.parse(text));
        } catch (err) {
          const failure = classifyReadFailure(adapter, err, signal);
          if (failure.error_class === 'cancelled') {
            const { cost } = open.complete({ usage: emptyUsage(), stopReason: null, cancelled: true });
            settle(cost.cost);
            turn.finish(499, 'cancelled');
            throw new SvcError('cancelled', { message: 'the client closed the connection' });
          }
          held.release();
          const published = open.fail(failure);
          await published.committed;
          throw toSvcError(failure);
        }
        const { published, cost } = open.complete({ usage: decoded.usage, stopReason: decoded.stop_reason });
        settle(cost.cost);
        // the call is closed: an encoding failure from here on is the gateway's own 500, not the upstream's
        const out = sameWire
          ? rewriteModel(text, req.model)
          : JSON.stringify(shape.encode(decoded, { model: req.model }));
        await Promise.all([published.committed, turn.finish(200, null).committed]);
        return c.body(out, 200, { 'content-type': 'application/json' });
      } catch (err) {
        reservation?.release();
        // a client that left gets one record (499 cancelled) in the trace and the request log alike
        const answer = signal.aborted
          ? new SvcError('cancelled', { message: 'the client closed the connection', cause: err })
          : err instanceof LlmCallFailed
            ? err.toSvcError()
            : err;
        if (!turn.finished) {
          const code = isSvcError(answer) ? answer.code : 'internal_error';
          const status = isSvcError(answer) ? answer.status : 500;
          await turn.finish(status, code).committed;
        }
        throw answer;
      }
    };
  };

  /** Routing chain → route.decided; throws the 403/503 when no candidate is usable. */
  function route(req: CanonicalRequest, key: KeyRecord, turn: Turn): ModelEntry {
    const facts = describeRequest(req, { workspacePath: key.workspace_path ?? null });
    turn.inputTokensEstimate = facts.estimatedInputTokens;
    const ctx: RouteContext = {
      policy: deps.policy.current(),
      registry: deps.registry,
      availableAdapters: available,
      allowedModels: allowedOf(key),
    };
    const decision = resolveRoute(facts, ctx);
    deps.bus.publish({
      type: 'route.decided',
      actor: 'router',
      turn_id: turn.id,
      payload: {
        chain: decision.chain,
        winner_index: decision.winner_index,
        chosen_model: decision.chosen?.id ?? null,
        elapsed_ms: decision.elapsed_ms,
        requested_model: req.model,
        gateway_key_id: key.key_id,
        inbound_shape: turn.shape,
        user_id: key.user_id ?? null,
        team_id: key.team_id ?? null,
      },
    });
    if (!decision.chosen) throw decision.error!;
    return decision.chosen;
  }

  return { messages: handle('anthropic'), chatCompletions: handle('openai') };
}

// --- internal ---

interface Turn {
  readonly id: string;
  readonly shape: ShapeName;
  requestedModel: string | null;
  model: string | null;
  provider: string | null;
  cost: string;
  /** The routing estimate (chars / 4), for clients that want an input count before the upstream's. */
  inputTokensEstimate: number;
  finished: boolean;
  /** Publishes turn.completed once (later calls return the first publication). */
  finish(status: number, errorCode: string | null): Published;
}

function createTurn(bus: Bus, id: string, key: KeyRecord, shape: ShapeName, startedMs: number): Turn {
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

function attributionOf(
  req: CanonicalRequest,
  model: ModelEntry,
  adapter: Adapter,
  key: KeyRecord,
  shape: ShapeName,
): CallAttribution {
  return {
    requested_model: req.model,
    model: model.id,
    provider: adapter.name,
    gateway_key_id: key.key_id,
    inbound_shape: shape,
    user_id: key.user_id ?? null,
    team_id: key.team_id ?? null,
    parent_session_id: null,
  };
}

function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new SvcError('invalid_request', {
      message: 'body: the request body is not valid JSON',
      details: { param: 'body' },
    });
  }
}

function anthropicHeaders(c: Context<GatewayEnv>): Record<string, string | undefined> {
  const h = c.req.raw.headers;
  return pickAnthropicHeaders({
    'anthropic-version': h.get('anthropic-version') ?? undefined,
    'anthropic-beta': h.get('anthropic-beta') ?? undefined,
  });
}
