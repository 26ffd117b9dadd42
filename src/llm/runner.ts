/**
 * @module The call runner: the one path every model call takes, whoever makes it (the gateway pipeline,
 * the agent loop). route (route.decided) → reserve → call (llm.call_started, retries) → canonical stream
 * (call-stream.ts) → settle → events committed. A running call is closed exactly once, and its reservation
 * settled or released exactly once, whichever of complete / fail / cancel comes first.
 */
import type { Adapter, UpstreamCall } from '../adapters/adapter.ts';
import type { UpstreamFailure } from '../adapters/upstream-error.ts';
import type { CanonicalUsage } from '../canonical/response.ts';
import type { StreamProgress } from '../canonical/stream.ts';
import type { Bus, Published } from '../events/bus.ts';
import type { CallActor, CallAttribution, InboundShape } from '../events/catalog.ts';
import { type Decimal, ZERO } from '../lib/decimal.ts';
import type { ModelEntry } from '../models/model-schema.ts';
import { type CallCost, priceCall } from '../models/pricing.ts';
import { type ModelRegistry, splitCanonicalId } from '../models/registry.ts';
import { type RouteDecision, resolveRoute } from '../routing/chain.ts';
import type { RouteFacts, SlotHooks } from '../routing/facts.ts';
import type { PolicyStore } from '../routing/load-policy.ts';
import type { PatternMatch } from '../routing/pattern/table.ts';
import {
  type CompleteInput,
  type LlmCallDeps,
  LlmCallFailed,
  type LlmCallInput,
  openLlmCall,
} from './call.ts';
import { type CanonicalEventStream, createEventStream, type StreamOptions } from './call-stream.ts';
import { resolvePartialUsage } from './partial-usage.ts';
import { DEFAULT_UPSTREAM_LIMITS, type UpstreamLimits, type UpstreamResponse } from './upstream.ts';

export interface CallRunnerDeps {
  bus: Bus;
  registry: ModelRegistry;
  policy: PolicyStore;
  /** Adapters whose provider key is set, by adapter name. */
  adapters: Readonly<Record<string, Adapter | undefined>>;
  llm: LlmCallDeps;
  /** The SSE line cap of DECISIONS §4 hardening (SVC_GATEWAY_MAX_SSE_LINE_BYTES); the default when absent. */
  limits?: UpstreamLimits;
}

/** Who makes the call: stamped on every event of it. */
export interface CallScope {
  actor: CallActor;
  turnId: string;
  sessionId: string | null;
  gatewayKeyId: string | null;
  inboundShape: InboundShape | null;
  userId: string | null;
  teamId: string | null;
  parentSessionId: string | null;
}

export interface RouteInput {
  facts: RouteFacts;
  scope: CallScope;
  allowedModels?: ReadonlySet<string> | null;
  hooks?: SlotHooks;
  /** The caller's spend since 00:00 UTC today, for `cost_today_above` (the gateway: the key's). */
  costTodayUsd?: () => Decimal;
}

/** A routed call: the model, its adapter and the model name the upstream expects. */
export interface Routed {
  model: ModelEntry;
  adapter: Adapter;
  upstreamModel: string;
  decision: RouteDecision;
  routeEvent: Published;
}

/**
 * A budget hold (the gateway's per-key caps); the agent server has none. A returned promise settles once
 * the change is written (PostgreSQL): the call's closing `committed` waits for it, so the answer never
 * precedes the spend it adds.
 */
export interface Hold {
  settle(cost: Decimal): void | Promise<void>;
  release(): void | Promise<void>;
}

export interface StartInput {
  routed: Routed;
  call: UpstreamCall;
  stream: boolean;
  scope: CallScope;
  requestedModel: string | null;
  signal: AbortSignal;
  hold?: Hold;
  /**
   * Non-streaming calls: read the whole body (at most this many bytes) as part of the attempt, so a
   * connection lost while the body arrives is retried like one lost before the head (nothing reached the
   * client yet). The text is then `RunningCall.text`.
   */
  bodyMaxBytes?: number;
  /** With `bodyMaxBytes`: the error a 2xx body holds instead of its answer (LlmCallInput.classifyBody). */
  classifyBody?: LlmCallInput['classifyBody'];
  /**
   * The request's input-token estimate: the input billed for a call that ends before the upstream states
   * its usage (a cancelled or broken stream, a body lost on the way; llm/partial-usage.ts). 0: none known.
   */
  inputTokensEstimate?: number;
  /** The most output the request allows (token-bound.ts): what an estimate of that output never passes. */
  outputTokensBound?: number;
}

/** A call whose upstream answered 2xx. Exactly one of complete / fail / cancel takes effect. */
export interface RunningCall {
  readonly routed: Routed;
  /** The upstream's 2xx answer: read its body once (streamEvents, or readUpstreamText). */
  readonly response: UpstreamResponse;
  /** The whole body, already read, when the call was started with `bodyMaxBytes`. */
  readonly text?: string;
  /** `text` parsed, once (undefined when it is no JSON). */
  readonly json?: unknown;
  readonly attempts: number;
  /** Milliseconds since the call started (before routing retries, after route.decided). */
  elapsedMs(): number;
  readonly closed: boolean;
  /** What the call cost once closed (zero while open and after a failure). */
  spent(): Decimal;
  /**
   * What the provider bills for this call's stream so far, when it ends unfinished (cancel, break): the
   * usage it reported, with estimates for the input and output it has not reported yet (marked estimated).
   */
  unfinishedUsage(progress: StreamProgress): CanonicalUsage;
  /** Closes as llm.call_completed (priced), settles the hold; `published.committed` when durable. */
  complete(c: CompleteInput): { published: Published; cost: CallCost };
  /**
   * Closes as llm.call_failed. With `usage` (what a stream reported before it broke, which the provider
   * bills) the event carries it priced and the hold settles to that cost; otherwise the hold is released.
   */
  fail(failure: UpstreamFailure, usage?: CanonicalUsage): Published;
  /**
   * The caller left. The gateway records llm.call_completed with error_class cancelled (spec 1); an agent
   * turn records llm.call_failed with error_class cancelled (spec 2 cancellation table). Either way the
   * usage seen so far is priced on the event and settled.
   */
  cancel(usage: CanonicalUsage, ttftMs: number | null): Published;
}

export interface CallRunner {
  /** Routing chain → route.decided; throws the chain's SvcError (403/503) when nothing is usable. */
  route(input: RouteInput): Routed;
  /**
   * The model the chain would choose, with no event: for answers that are not a model call (token
   * counting). Throws the chain's SvcError like `route`.
   */
  choose(input: Omit<RouteInput, 'scope'>): Pick<Routed, 'model' | 'adapter' | 'upstreamModel' | 'decision'>;
  /** Sends the call (retries per DECISIONS §4); throws LlmCallFailed after closing it. Releases the hold then. */
  start(input: StartInput): Promise<RunningCall>;
  /**
   * Reads a running call's SSE body as canonical events and closes the call: message.complete is yielded
   * only after llm.call_completed is committed; a failure closes it as llm.call_failed (committed) and is
   * thrown as SvcError (details.error_class); an abort closes it as cancelled with the usage seen so far.
   */
  streamEvents(call: RunningCall, signal: AbortSignal, options?: StreamOptions): CanonicalEventStream;
}

export function createCallRunner(deps: CallRunnerDeps): CallRunner {
  const available = (): ReadonlySet<string> =>
    new Set(Object.keys(deps.adapters).filter((k) => deps.adapters[k] !== undefined));
  const availableSet = available();

  const decide = (input: Omit<RouteInput, 'scope'>): RouteDecision =>
    resolveRoute(input.facts, {
      policy: deps.policy.current(),
      registry: deps.registry,
      availableAdapters: availableSet,
      allowedModels: input.allowedModels ?? null,
      hooks: input.hooks,
      costTodayUsd: input.costTodayUsd,
    });
  const chosen = (decision: RouteDecision) => {
    if (!decision.chosen) throw decision.error!;
    const model = decision.chosen;
    const adapter = deps.adapters[model.adapter]!;
    return { model, adapter, upstreamModel: splitCanonicalId(model.id)!.modelName, decision };
  };

  return {
    choose: (input) => chosen(decide(input)),

    route(input) {
      const decision = decide(input);
      const s = input.scope;
      const routeEvent = deps.bus.publish({
        type: 'route.decided',
        actor: 'router',
        turn_id: s.turnId,
        session_id: s.sessionId,
        payload: {
          chain: decision.chain,
          winner_index: decision.winner_index,
          chosen_model: decision.chosen?.id ?? null,
          elapsed_ms: decision.elapsed_ms,
          // which routing.yaml decided (its SHA-256, as GET /routing/policy shows it): a reload is visible here
          routing_policy_version: decision.policy_version,
          // the rule behind the chain's `rule` entry (accepted or rejected): which of several rules routed it
          ...(decision.rule === null ? {} : { rule: decision.rule }),
          requested_model: input.facts.requestedModel,
          gateway_key_id: s.gatewayKeyId,
          inbound_shape: s.inboundShape,
          user_id: s.userId,
          team_id: s.teamId,
          ...(s.sessionId ? { parent_session_id: s.parentSessionId } : {}),
          fingerprint: decision.fingerprint,
          // the estimate the size predicates and the fingerprint's bucket read (svc routing explain --input-tokens)
          input_tokens_estimate: input.facts.estimatedInputTokens,
        },
      });
      if (decision.pattern) publishPatternMatched(deps.bus, decision.pattern, s, routeEvent.event.id);
      return { ...chosen(decision), routeEvent };
    },

    async start(input) {
      const { routed, scope } = input;
      const hold = onceHold(input.hold);
      const attribution: CallAttribution = {
        requested_model: input.requestedModel,
        model: routed.model.id,
        provider: routed.adapter.name,
        gateway_key_id: scope.gatewayKeyId,
        inbound_shape: scope.inboundShape,
        user_id: scope.userId,
        team_id: scope.teamId,
        parent_session_id: scope.parentSessionId,
      };
      let open: Awaited<ReturnType<typeof openLlmCall>>;
      try {
        open = await openLlmCall(deps.llm, {
          adapter: routed.adapter,
          model: routed.model,
          call: input.call,
          attribution,
          stream: input.stream,
          turnId: scope.turnId,
          sessionId: scope.sessionId,
          actor: scope.actor,
          signal: input.signal,
          bodyMaxBytes: input.bodyMaxBytes,
          classifyBody: input.classifyBody,
          inputTokensEstimate: input.inputTokensEstimate,
          sseEventMaxBytes: (deps.limits ?? DEFAULT_UPSTREAM_LIMITS).maxSseLineBytes,
        });
      } catch (err) {
        // a body the provider answered but that was lost on the way is billed, cancelled or not
        if (err instanceof LlmCallFailed && err.spent) await hold.settle(err.cost);
        else if (err instanceof LlmCallFailed && err.failure.error_class === 'cancelled')
          await hold.settle(ZERO);
        else await hold.release();
        throw err;
      }
      let spent = ZERO;
      // `closed` is a data property, not a getter: with a getter (a new closure per call) V8 keeps each such
      // object in dictionary mode, and every call's objects (the request, its events, its answer) then
      // outlived the scavenges until the next full GC: ~14 KiB per gateway request promoted to the old
      // generation (README §Performance, eleventh run)
      const close = () => {
        if (call.closed) throw new Error('call already closed');
        call.closed = true;
      };
      const call: Omit<RunningCall, 'closed'> & { closed: boolean } = {
        routed,
        response: open.response,
        text: open.text,
        json: open.json,
        attempts: open.attempts,
        elapsedMs: open.elapsedMs,
        closed: false,
        spent: () => spent,
        unfinishedUsage: (p) =>
          resolvePartialUsage(
            p.usage(),
            input.inputTokensEstimate ?? 0,
            p.generatedQuarterTokens(),
            p.usageFinal(),
            input.outputTokensBound,
          ),
        complete(c) {
          close();
          const out = open.complete(c);
          spent = out.cost.cost;
          return { ...out, published: withHold(out.published, hold.settle(spent)) };
        },
        fail(failure, usage) {
          close();
          if (usage === undefined || !hasTokens(usage)) {
            const released = hold.release();
            return withHold(open.fail(failure), released);
          }
          spent = priceCall(deps.registry, routed.model.id, usage, undefined, input.call.serviceTier).cost;
          const settled = hold.settle(spent);
          return withHold(open.fail(failure, usage), settled);
        },
        cancel(usage, ttftMs) {
          close();
          if (scope.actor === 'agent') {
            spent = priceCall(deps.registry, routed.model.id, usage, undefined, input.call.serviceTier).cost;
            const settled = hold.settle(spent);
            return withHold(open.fail(CANCELLED, usage), settled);
          }
          const out = open.complete({ usage, stopReason: null, cancelled: true, ttftMs });
          spent = out.cost.cost;
          return withHold(out.published, hold.settle(spent));
        },
      };
      return call;
    },

    streamEvents(call, signal, options = {}) {
      const startedMs = options.startedMs ?? performance.now() - call.elapsedMs();
      const maxLineBytes = (deps.limits ?? DEFAULT_UPSTREAM_LIMITS).maxSseLineBytes;
      return createEventStream(call, signal, startedMs, maxLineBytes, options);
    },
  };
}

/** A hold whose first settle or release wins; later calls do nothing. */
export function onceHold(hold: Hold | undefined): Hold {
  let done = false;
  return {
    settle(cost) {
      if (done) return;
      done = true;
      return hold?.settle(cost);
    },
    release() {
      if (done) return;
      done = true;
      return hold?.release();
    },
  };
}

/** `published`, committed once the hold's settlement or release is written too. */
function withHold(published: Published, written: void | Promise<void>): Published {
  if (!written) return published;
  return { event: published.event, committed: Promise.all([published.committed, written]).then(() => {}) };
}

// --- internal ---

/** Slot 4 won: the learned evidence, child of the route.decided it explains. */
function publishPatternMatched(bus: Bus, m: PatternMatch, s: CallScope, routeEventId: string): void {
  bus.publish({
    type: 'pattern.matched',
    actor: 'router',
    turn_id: s.turnId,
    session_id: s.sessionId,
    parent_event_id: routeEventId,
    payload: {
      chose_model: m.model,
      fingerprint_version: m.fingerprint_version,
      fingerprint: m.fingerprint,
      samples: m.samples,
      success_rate: m.success_rate,
      median_cost_usd: m.median_cost_usd,
      gateway_key_id: s.gatewayKeyId,
    },
  });
}

const CANCELLED: UpstreamFailure = {
  error_class: 'cancelled',
  code: 'upstream_error',
  status: null,
  message: 'the call was cancelled before the model finished',
  retryable: false,
};

/** Whether a stream reported any tokens before it ended (what the provider bills for it). */
function hasTokens(u: CanonicalUsage): boolean {
  return u.input_tokens + u.output_tokens + u.cached_input_tokens + u.cache_creation_input_tokens > 0;
}
