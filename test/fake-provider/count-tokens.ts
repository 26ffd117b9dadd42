/**
 * `POST /v1/messages/count_tokens` as Anthropic answers it: the same header and thinking checks as Messages,
 * then `{input_tokens}`. The last user turn's directives fail it as they fail a generation before its answer
 * (error=STATUS with its retry headers, spend-limit, hang, hold, slow-headers, redirect, reset-after=0; an
 * error-in-200 or stream-error is the HTTP error, as Anthropic answers a count), and reset-after=N>0 sends
 * half the body then resets the connection. The scripted queue is the generations' alone.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { anthropicCodec } from './anthropic.ts';
import { thinkingRefusal } from './anthropic-refusals.ts';
import { billedInputTokens } from './billing.ts';
import { errorReply, faultBeforeAnswer, faultHeaders, type ReplyDeps } from './reply.ts';
import type { FakeStep } from './script.ts';
import { parseDirectives } from './script.ts';
import { chunkStream, splitBody } from './sse.ts';

export async function countTokens(c: Context, deps: ReplyDeps): Promise<Response> {
  const ctx = {
    id: deps.newId('count_'),
    requestId: deps.newId('req_01Fake'),
    model: '',
    created: 0,
    includeUsage: false,
  };
  const refused = anthropicCodec.checkHeaders(c.req.raw.headers, ctx);
  if (refused) return c.json(refused.body as object, refused.status as 401, anthropicCodec.headers(ctx));
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch {
    body = undefined;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return errorReply(anthropicCodec, ctx, 400, 'The request body is not valid JSON.');
  const unfit = thinkingRefusal(body as Record<string, unknown>);
  if (unfit) return errorReply(anthropicCodec, ctx, 400, unfit);
  const plan = countPlan(body as Record<string, unknown>);
  const early = await faultBeforeAnswer(c, anthropicCodec, deps, ctx, plan);
  if (early) return early;
  const status = plan.error ?? plan.errorIn200 ?? plan.streamError;
  if (status !== undefined) return errorReply(anthropicCodec, ctx, status, plan.message, faultHeaders(plan));
  const input_tokens = billedInputTokens('anthropic', body as Record<string, unknown>);
  if (plan.resetAfter === undefined) return c.json({ input_tokens }, 200, anthropicCodec.headers(ctx));
  // half the body, then the connection reset
  const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
  const pieces = splitBody(JSON.stringify({ input_tokens }));
  const stream = chunkStream(pieces, {
    signal: c.req.raw.signal,
    tracker: deps.tracker,
    destroy: socket && (() => socket.destroy()),
    resetAfter: 2,
  });
  return new Response(stream, {
    status: 200,
    headers: { ...anthropicCodec.headers(ctx), 'content-type': 'application/json' },
  });
}

// --- internal ---

/** The directives of a count body's last user turn; one the generations would refuse is counted as text. */
function countPlan(body: Record<string, unknown>): FakeStep {
  if (!Array.isArray(body.messages)) return {};
  try {
    return parseDirectives(anthropicCodec.readTurn(body).turnText);
  } catch {
    return {};
  }
}
