/**
 * @module One gateway call, top to bottom (STYLE: the data path): body → shape decode → CanonicalRequest →
 * the call runner's routing chain (route.decided) → budget admission (worst case held) → adapter request
 * (upstream-request.ts; same wire: the client's bytes with only `model` replaced) → the runner's call
 * (retries, llm.call_*) → response or stream in the client's shape → the hold settled → turn.completed.
 * Every answer is sent only after its events are committed to the trace store.
 */
import type { Handler } from 'hono';
import { fitTarget } from '../adapters/anthropic/fit-model.ts';
import { leavesOutReasoningContext, reasoningLeftOutForGatewayName } from '../adapters/openai/fit-effort.ts';
import { samplingLeftOutForGatewayName, withoutMembers } from '../adapters/openai/fit-sampling.ts';
import { toSvcError } from '../adapters/upstream-error.ts';
import { type CanonicalResponse, emptyUsage } from '../canonical/response.ts';
import type { Bus } from '../events/bus.ts';
import type { InboundShape as ShapeName } from '../events/catalog.ts';
import { cutOffWhenStalled } from '../http/answer-stall.ts';
import { type BeforeAnswer, cutOffAnswer, stopCutOffSignal, untilAnswered } from '../http/stop-cut-off.ts';
import { isSvcError, SvcError } from '../lib/errors.ts';
import { rewriteModel } from '../lib/json-splice.ts';
import type { Logger } from '../lib/log.ts';
import { LlmCallFailed } from '../llm/call.ts';
import { classifyReadFailure } from '../llm/call-failure.ts';
import { type CallRunner, type Hold, onceHold } from '../llm/runner.ts';
import { readUpstreamText, type UpstreamLimits } from '../llm/upstream.ts';
import { worstCaseCost } from '../models/pricing.ts';
import type { ModelRegistry } from '../models/registry.ts';
import { boundCallTokens } from '../models/token-bound.ts';
import type { SlotHooks } from '../routing/facts.ts';
import { describeRequest } from '../routing/request-facts.ts';
import { jsonAnswer, keptAnswerHeaders, setAnswerHeader } from './answer.ts';
import { DROPPED_PARAMS_HEADER, droppedParams, fittedDroppedParams } from './dropped-params.ts';
import type { GatewayEnv } from './env.ts';
import { portableReasoning } from './foreign-reasoning.ts';
import { createAllowedModels, inboundAnthropicHeaders, inboundSignal, readInboundBody } from './inbound.ts';
import { budgetKeyIdOf } from './keystore/keystore.ts';
import type { QuotaManager } from './quota.ts';
import { askedServiceTier, withoutTierField } from './service-tier.ts';
import { DROPPED_TOOLS_HEADER, droppedHostedTools } from './shapes/responses/namespaces.ts';
import { inputItems, type StoredResponses, withSignatures } from './shapes/responses/stored-responses.ts';
import { SHAPES } from './shapes/shapes.ts';
import { runsWebSearch } from './shapes/web-search.ts';
import type { SpendToday } from './spend-today.ts';
import { createStreamResponse } from './stream-response.ts';
import { costOnTurn, createTurn, scopeOf } from './turn.ts';
import { encodeTranslated, sameWireOps, withinOutputLimit } from './upstream-request.ts';

/** Response header naming the registry model that served the request (issue 13). */
export const ROUTED_MODEL_HEADER = 'svc-routed-model';

/** The names of the headers that carry a request's id (`requestIdHeaders`). */
export const REQUEST_ID_HEADER_NAMES = ['svc-request-id', 'request-id', 'x-request-id'] as const;

/**
 * The headers that name a request: `svc-request-id` (the trace's turn_id), and the same id under the names
 * the Anthropic and OpenAI SDKs read into `_request_id`.
 */
export function requestIdHeaders(id: string): Record<string, string> {
  // the names of REQUEST_ID_HEADER_NAMES, written out: this runs on every answer
  return { 'svc-request-id': id, 'request-id': id, 'x-request-id': id };
}

export interface PipelineDeps {
  bus: Bus;
  log: Logger;
  registry: ModelRegistry;
  /** The shared call path (route → reserve → call → settle); the agent loop is its other client. */
  runner: CallRunner;
  /** Slot 4's learned table (routing/pattern/router.ts); absent: slot 4 answers no_match. */
  routingHooks?: SlotHooks;
  quota: QuotaManager;
  /** Each budget's spend today (a rotation's keys share one): what `cost_today_above` reads. */
  spendToday: SpendToday;
  maxBodyBytes: number;
  upstreamLimits: UpstreamLimits;
  /** How long a client may take no part of its answer before it is cut off (the stream idle timeout). */
  clientStallMs: number;
  /** Responses answered on translated models, for follow-ups naming them; absent: such follow-ups get a 400. */
  storedResponses?: StoredResponses;
}

export interface Pipeline {
  /** POST /v1/messages */
  messages: Handler<GatewayEnv>;
  /** POST /v1/chat/completions */
  chatCompletions: Handler<GatewayEnv>;
  /** POST /v1/responses */
  responses: Handler<GatewayEnv>;
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  const allowedOf = createAllowedModels();

  const handle = (shapeName: ShapeName): Handler<GatewayEnv> => {
    const shape = SHAPES[shapeName];
    return async (c) => {
      const startedMs = performance.now();
      const signal = inboundSignal(c);
      const key = c.get('gatewayKey');
      const turn = createTurn(deps.bus, c, key, shapeName, startedMs);
      const scope = scopeOf(key, turn);
      let hold: Hold | undefined;
      let before: BeforeAnswer | undefined;
      try {
        let { bodyText, body } = await readInboundBody(c, deps.maxBodyBytes);
        const receivedText = bodyText;
        // from here until its answer begins, a stop that cuts the request off answers it 503 (x-should-retry)
        before = untilAnswered(c.env?.outgoing, signal);
        // only a Messages body forwards them (anthropic-version, anthropic-beta): read once, for that shape alone
        const anthropicHeaders = shapeName === 'anthropic' ? inboundAnthropicHeaders(c) : undefined;
        let req = shape.decode(body, anthropicHeaders);
        // the body as the client sent it: what a response echoes (its previous_response_id included)
        const received = body as Record<string, unknown>;
        c.set('model', req.model);
        turn.requestedModel = req.model;

        // a Responses follow-up that names this key's earlier answers on a translated model: routing sees the
        // whole conversation it continues (size, tools, images, message count), not only its newest turn
        const kept = shapeName === 'openai_responses' ? deps.storedResponses : undefined;
        const foreign = kept?.foreign(received, key.key_id);
        if (foreign) throw notFoundForKey(foreign);
        const whole = kept ? kept.expand(body as Record<string, unknown>, key.key_id) : body;
        const wholeReq = whole === body ? req : shape.decode(whole, anthropicHeaders);
        const facts = describeRequest(wholeReq, { workspacePath: key.workspace_path ?? null });
        turn.inputTokensEstimate = facts.estimatedInputTokens;
        // slot 4 never overrides a canonical id or alias the client named (routing/policies/pattern.ts)
        const routed = deps.runner.route({
          facts,
          scope,
          allowedModels: allowedOf(key),
          hooks: deps.routingHooks,
          costTodayUsd: () => deps.spendToday.of(budgetKeyIdOf(key)),
        });
        const { model, adapter, upstreamModel } = routed;
        turn.model = model.id;
        turn.provider = adapter.name;
        // every answer names what served it (issue 13), errors after routing included
        c.set('routedModel', model.id);
        c.set('routedBy', routed.decision.chain[routed.decision.winner_index]?.policy ?? 'unknown');
        setAnswerHeader(c, ROUTED_MODEL_HEADER, model.id);

        const wire = sameWireOps(adapter, shapeName);
        const sameWire = wire !== undefined;
        // hosted web search (Codex always offers it) is left out on another wire, but for a model whose provider
        // runs its own search (a Claude model: shapes/web-search.ts), and the answer says so
        const searched = req.web_search !== undefined && runsWebSearch(adapter.name);
        const dropped =
          shapeName === 'openai_responses' && !sameWire && !searched
            ? droppedHostedTools(received).join(', ')
            : '';
        if (dropped) {
          c.set('droppedTools', dropped);
          setAnswerHeader(c, DROPPED_TOOLS_HEADER, dropped);
        }
        // a body written for another Claude model is fitted to the routed one (adapters/anthropic/fit-model.ts)
        const fitTo = fitTarget(req.model, routed, sameWire);
        // a paid service tier runs only where models.yaml prices it; else the field is left out (service-tier.ts)
        const asked = askedServiceTier(shapeName, received, model, sameWire);
        // sampling an OpenAI reasoning model refuses, from a client that did not know the model (adapters/openai/fit-sampling.ts)
        const leftOut = sameWire
          ? both(
              both(
                samplingLeftOutForGatewayName(adapter.name, req.model, upstreamModel, received),
                reasoningLeftOutForGatewayName(adapter.name, req.model, upstreamModel, received),
              ),
              asked.leftOut,
            )
          : NONE;
        // knobs the other wire has no equivalent for are left out, and the answer says which
        const params = (
          sameWire
            ? both(
                both(fittedDroppedParams(received, upstreamModel, fitTo), leftOut),
                // nested, so left out by the Responses passthrough itself (adapters/openai/fit-effort.ts)
                shapeName === 'openai_responses' &&
                  leavesOutReasoningContext(adapter.name, req.model, upstreamModel, received)
                  ? ['reasoning.context']
                  : NONE,
              )
            : droppedParams(received, shapeName, adapter.name, upstreamModel, whole)
        ).join(', ');
        if (params) {
          c.set('droppedParams', params);
          setAnswerHeader(c, DROPPED_PARAMS_HEADER, params);
        }
        // that follow-up is spelled out on any model (an OpenAI model gets the gateway's kept turns as plain input
        // items, since OpenAI never stored them; what OpenAI stored itself goes to it as named)
        const spelled = kept && whole !== body && sameWire ? kept.expand(received, key.key_id, true) : whole;
        if (spelled !== body) {
          body = spelled;
          bodyText = JSON.stringify(body);
          req = sameWire ? shape.decode(body, anthropicHeaders) : wholeReq;
        }
        // another model family's reasoning replayed as sent (Codex after a model switch, a conversation moved
        // from an OpenRouter model to Claude) is left out: a provider refuses the whole request over a seal it
        // did not make
        if (sameWire) {
          const portable = portableReasoning(
            shapeName,
            adapter.name,
            upstreamModel,
            body as Record<string, unknown>,
          );
          if (portable !== body) {
            body = portable;
            bodyText = JSON.stringify(body);
            req = shape.decode(body, anthropicHeaders);
          }
        }
        // what this answer says is kept for the key's follow-ups: a translated answer, and an OpenAI model's
        // (which OpenAI stores too) so the conversation can move on to another model
        const storedBy = !kept ? undefined : !sameWire ? 'gateway' : keptWhole(whole) ? 'openai' : undefined;
        const stored = storedBy ? kept : undefined;
        // same wire, `text` is the upstream's answer (its body, or a stream's terminal frame): a request that
        // named nothing kept here is kept as the two texts (stored-responses keepText)
        const keep =
          stored &&
          ((response: Record<string, unknown>, text?: string) => {
            if (text !== undefined && whole === received)
              stored.keepText(response, receivedText, text, key.key_id);
            else {
              const size = text === undefined ? undefined : bodyText.length + text.length;
              stored.remember(response, inputItems(whole), key.key_id, storedBy, size);
            }
          });

        // translated or fitted: never more output asked of the model than it can give (the bound holds that much)
        if (!sameWire || fitTo) req = withinOutputLimit(req, model);
        // encoded before the budget is asked: a request the routed model refuses (a field only another
        // provider serves) is the 400 that names it, never a 429 for a reservation it would not bill
        const call = wire
          ? wire.encodePassthrough({
              bodyText: withoutMembers(bodyText, leftOut),
              body: withoutTierField(body as Record<string, unknown>, asked.leftOut),
              upstreamModel,
              stream: req.stream,
              headers: req.passthrough?.headers,
              fitTo,
            })
          : encodeTranslated(adapter, req, upstreamModel, shapeName, body, model.id);
        if (asked.tier) call.serviceTier = asked.tier;
        const bound = boundCallTokens(req, model, bodyText);
        const worst = worstCaseCost(deps.registry, model.id, bound, asked.hold);
        hold = onceHold(
          await deps.quota.admit(key, worst.cost, {
            requested_model: req.model,
            model: model.id,
            turn_id: turn.id,
          }),
        );
        const running = await deps.runner.start({
          routed,
          call,
          stream: req.stream,
          scope,
          requestedModel: req.model,
          signal: before.signal,
          hold: costOnTurn(hold, turn, (cost) => deps.spendToday.add(budgetKeyIdOf(key), cost)),
          inputTokensEstimate: turn.inputTokensEstimate,
          outputTokensBound: bound.outputTokens,
          // a non-streaming body is read within the attempt: a connection lost while it arrives is retried
          // and one that holds an error in place of the answer (OpenRouter) fails the attempt like its status
          // (undefined for a stream: the call reads a field it is given as absent; no object spread a request)
          bodyMaxBytes: req.stream ? undefined : deps.upstreamLimits.maxBodyBytes,
          classifyBody: req.stream ? undefined : (wire ?? adapter).classifyResponseBody,
        });
        before.answered();

        if (req.stream) {
          // the stop came as the stream's first event did (its body is aborted): nothing went out yet
          if (before.cut) {
            await running.fail(classifyReadFailure(adapter, before.signal.reason, before.signal)).committed;
            throw cutOffAnswer(before.signal.reason);
          }
          return createStreamResponse({
            call: running,
            runner: deps.runner,
            shape,
            sameWire: wire ?? null,
            request: received,
            idBase: turn.id,
            requestedModel: req.model,
            includeUsage: req.include_usage,
            inputTokensEstimate: turn.inputTokensEstimate,
            maxSseLineBytes: deps.upstreamLimits.maxSseLineBytes,
            clientStallMs: deps.clientStallMs,
            onClientStall: () =>
              deps.log.warn('streaming client took nothing in time; cut off', {
                request_id: turn.id,
                stall_ms: deps.clientStallMs,
              }),
            signal,
            stopSignal: stopCutOffSignal(c.env?.outgoing),
            startedMs: performance.now() - running.elapsedMs(), // ttft_ms counts from the call's start
            headers: keptAnswerHeaders(c),
            turn,
            ...(keep ? { onResponse: keep } : {}),
          });
        }

        let text: string;
        let answered: Record<string, unknown>;
        let decoded: CanonicalResponse;
        try {
          text = running.text ?? (await readUpstreamText(running.response, deps.upstreamLimits.maxBodyBytes));
          // parsed once, by the call that read it (llm/cut-short.ts): again only to report a body that is no JSON
          answered = (running.json ?? JSON.parse(text)) as Record<string, unknown>;
          decoded = (wire ?? adapter).decodeResponse(answered);
        } catch (err) {
          const failure = classifyReadFailure(adapter, err, signal);
          if (failure.error_class === 'cancelled') {
            running.cancel(emptyUsage(), null);
            turn.finish(499, 'cancelled');
            throw new SvcError('cancelled', { message: 'the client closed the connection' });
          }
          await running.fail(failure).committed;
          throw toSvcError(failure);
        }
        const { published } = running.complete({ usage: decoded.usage, stopReason: decoded.stop_reason });
        // the call is closed: an encoding failure from here on is the gateway's own 500, not the upstream's
        let out: string;
        if (sameWire) {
          out = rewriteModel(text, req.model);
          keep?.(answered, text);
        } else {
          const encoded = shape.encode(decoded, { model: req.model, request: received, idBase: turn.id });
          // what is kept for follow-ups carries the reasoning signatures, asked for or not
          keep?.(
            shape.encode(decoded, { model: req.model, request: withSignatures(received), idBase: turn.id }),
          );
          out = JSON.stringify(encoded);
        }
        await Promise.all([published.committed, turn.finish(200, null).committed]);
        cutOffWhenStalled(c.env?.outgoing, deps.clientStallMs, () =>
          deps.log.warn('client took nothing of its answer in time; cut off', {
            request_id: turn.id,
            stall_ms: deps.clientStallMs,
          }),
        );
        return jsonAnswer(c, out);
      } catch (err) {
        // written before the answer (PostgreSQL), so the client's next request is not checked against it
        const released = hold?.release();
        // a client that left gets one record (499 cancelled) in the trace and the request log alike
        const answer = signal.aborted
          ? new SvcError('cancelled', { message: 'the client closed the connection', cause: err })
          : err instanceof LlmCallFailed
            ? before?.cut && err.failure.error_class === 'cancelled'
              ? cutOffAnswer(before.signal.reason)
              : err.toSvcError()
            : err;
        if (!turn.finished) {
          const code = isSvcError(answer) ? answer.code : 'internal_error';
          const status = isSvcError(answer) ? answer.status : 500;
          const finished = turn.finish(status, code);
          // the store is unreachable: the refusal is told at once, its record follows when the store is back
          if (code !== 'budget_store_unavailable') await finished.committed;
        }
        await released;
        throw answer;
      }
    };
  };

  return {
    messages: handle('anthropic'),
    chatCompletions: handle('openai'),
    responses: handle('openai_responses'),
  };
}

// --- internal ---

/**
 * Whether an OpenAI model's answer to `whole` (the request with what the gateway keeps spelled out) is kept
 * too: when OpenAI stores it (store not false) and the gateway knows all it continues (no stored
 * conversation, prompt template or earlier response it does not keep) and the answer is in the response
 * (not background). Otherwise a follow-up on another model gets the 400, never an answer without turns.
 */
function keptWhole(whole: Record<string, unknown>): boolean {
  return (
    whole.store !== false &&
    whole.background !== true &&
    whole.previous_response_id == null &&
    whole.conversation == null &&
    whole.prompt == null
  );
}

const NONE: readonly string[] = [];

/** `a` then `b`: one of them as it is when the other is empty (most requests leave nothing out). */
function both(a: readonly string[], b: readonly string[]): readonly string[] {
  return a.length === 0 ? b : b.length === 0 ? a : [...a, ...b];
}

/**
 * The 400 for a follow-up naming another key's kept response or item: OpenAI's words for an id it does not
 * hold, after the field as the gateway's 400s name it, so the answer tells nothing of whether the id exists.
 */
function notFoundForKey(foreign: { param: string; id: string }): SvcError {
  const what = foreign.param === 'previous_response_id' ? 'Previous response' : 'Item';
  return new SvcError('invalid_request', {
    message: `${foreign.param}: ${what} with id '${foreign.id}' not found.`,
    details: { param: foreign.param },
  });
}
