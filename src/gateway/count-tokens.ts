/**
 * @module POST /v1/messages/count_tokens (the Anthropic SDK's `countTokens`, Claude Code): routed like a
 * call but no call is made and no event is written. A model on the Anthropic wire gets the provider's own
 * count (the client body forwarded, only `model` replaced); any other model gets routing's script-aware
 * estimate (request-facts.ts), marked
 * `svc-token-count: estimate` (issue 13). A body fitted to the routed model names what fitting left out in
 * `svc-dropped-params`, as the call does; reasoning Claude did not seal is left out as the call leaves it out.
 * A stop that cuts the count off before it is read answers 503 `service_shutting_down`, as a call's.
 */
import type { Handler } from 'hono';
import * as v from 'valibot';
import { fitTarget } from '../adapters/anthropic/fit-model.ts';
import { checkResponseShape, TokenCountSchema } from '../adapters/response-shape.ts';
import { toSvcError } from '../adapters/upstream-error.ts';
import { cutOffAnswer, untilAnswered } from '../http/stop-cut-off.ts';
import { isSvcError, SvcError } from '../lib/errors.ts';
import type { LlmCallDeps } from '../llm/call.ts';
import type { CallRunner } from '../llm/runner.ts';
import type { SlotHooks } from '../routing/facts.ts';
import { describeRequest } from '../routing/request-facts.ts';
import { jsonAnswer, setAnswerHeader } from './answer.ts';
import { askProviderCount } from './count-upstream.ts';
import { DROPPED_PARAMS_HEADER, fittedDroppedParams } from './dropped-params.ts';
import type { GatewayEnv } from './env.ts';
import { portableReasoning } from './foreign-reasoning.ts';
import { createAllowedModels, inboundAnthropicHeaders, inboundSignal, readInboundBody } from './inbound.ts';
import { budgetKeyIdOf } from './keystore/keystore.ts';
import { ROUTED_MODEL_HEADER } from './pipeline.ts';
import { decodeAnthropicRequest } from './shapes/anthropic/decode.ts';
import type { SpendToday } from './spend-today.ts';

export interface CountTokensDeps {
  runner: CallRunner;
  /** The call path's upstream client, retry policy and budget, total time and stop signal. */
  llm: LlmCallDeps;
  maxBodyBytes: number;
  /** Each key's spend today, so a `cost_today_above` rule routes a count as it would route the call. */
  spendToday?: SpendToday;
  /** Slot 4's learned table, so a count of a request slot 4 routes names the model its call runs on. */
  routingHooks?: SlotHooks;
}

/** Header that marks a count as the gateway's estimate rather than the provider's. */
export const TOKEN_COUNT_HEADER = 'svc-token-count';

export function createCountTokensHandler(deps: CountTokensDeps): Handler<GatewayEnv> {
  const allowedOf = createAllowedModels();
  return async (c) => {
    const key = c.get('gatewayKey');
    const { bodyText, body } = await readInboundBody(c, deps.maxBodyBytes);
    // the count body is a Messages body without the generation fields (wire-formats §1.1)
    const req = decodeAnthropicRequest({ ...body, max_tokens: 1 }, inboundAnthropicHeaders(c));
    c.set('model', req.model);
    const facts = describeRequest(req, { workspacePath: key.workspace_path ?? null });
    const spendToday = deps.spendToday;
    const routed = deps.runner.choose({
      facts,
      allowedModels: allowedOf(key),
      hooks: deps.routingHooks,
      ...(spendToday ? { costTodayUsd: () => spendToday.of(budgetKeyIdOf(key)) } : {}),
    });
    c.set('routedModel', routed.model.id);
    c.set('routedBy', routed.decision.chain[routed.decision.winner_index]?.policy ?? 'unknown');
    setAnswerHeader(c, ROUTED_MODEL_HEADER, routed.model.id);
    const { adapter } = routed;
    if (!adapter.encodeCountTokens) {
      setAnswerHeader(c, TOKEN_COUNT_HEADER, 'estimate');
      return jsonAnswer(c, JSON.stringify({ input_tokens: facts.estimatedInputTokens }));
    }
    // a body written for another Claude model is fitted to the routed one as its call would be (thinking and
    // effort: the count endpoint refuses what Messages refuses of them), max_tokens aside: a count has none;
    // what that leaves out is named as the call names it
    const { upstreamModel } = routed;
    const fitTo = fitTarget(req.model, routed, true);
    const params = fittedDroppedParams(body, upstreamModel, fitTo).join(', ');
    if (params) {
      c.set('droppedParams', params);
      setAnswerHeader(c, DROPPED_PARAMS_HEADER, params);
    }
    // reasoning another model family sealed (or a gateway mark) is left out as the call leaves it out, so the
    // count is of what the call sends
    const sent = portableReasoning('anthropic', adapter.name, upstreamModel, body as Record<string, unknown>);
    const call = adapter.encodeCountTokens({
      bodyText: sent === body ? bodyText : JSON.stringify(sent),
      body: sent,
      upstreamModel,
      stream: false,
      headers: req.passthrough?.headers,
      fitTo,
    });
    const signal = inboundSignal(c);
    // until the count is read, a stop that cuts the request off answers it 503 (x-should-retry), as a call's
    const before = untilAnswered(c.env?.outgoing, signal);
    try {
      // retried as a call is; a failure it gave up on is answered as a call's (count-upstream.ts)
      const text = await askProviderCount(deps.llm, adapter, call, before.signal);
      before.answered();
      const count = checkResponseShape(CountSchema, parseOrUndefined(text), 'a token count');
      setAnswerHeader(c, TOKEN_COUNT_HEADER, 'provider');
      return jsonAnswer(c, JSON.stringify({ input_tokens: count.input_tokens }));
    } catch (err) {
      if (before.cut) throw cutOffAnswer(before.signal.reason);
      if (signal.aborted) throw new SvcError('cancelled', { message: 'the client closed the connection' });
      if (isSvcError(err)) throw err;
      throw toSvcError(adapter.classifyNetworkError(err));
    }
  };
}

// --- internal ---

const CountSchema = v.looseObject({ input_tokens: TokenCountSchema });

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // checkResponseShape names it as a body that is not a token count
  }
}
