/**
 * @module Turn endpoints of spec 2 §Turns: submit (202, asynchronous), cancel and answer a confirmation.
 * The routes validate input and check the session; the TurnEngine (engine.ts) does the work.
 */
import type { Hono } from 'hono';
import * as v from 'valibot';
import { IMAGE_MEDIA_TYPES } from '../../canonical/message.ts';
import { readJsonBody } from '../../http/json-body.ts';
import { validateInput } from '../../http/validation.ts';
import { isSvcError, SvcError } from '../../lib/errors.ts';
import { issueMessage } from '../../lib/issue-message.ts';
import { formatPath } from '../../models/config-yaml.ts';
import type { AgentAppDeps } from '../app.ts';
import type { AgentEnv } from '../env.ts';
import { resolveModelRef } from '../sessions/models.ts';
import { engineOf } from '../sessions/routes.ts';
import { requireOpenSession, requireSession } from '../sessions/store.ts';
import type { SubmitTurnInput } from './engine.ts';

const SubmitTurnSchema = v.object({
  content: v.array(v.unknown(), 'must be a list of content blocks'),
  per_message_override: v.optional(
    v.nullable(v.pipe(v.string('must be a model id or alias'), v.minLength(1, 'must not be empty'))),
  ),
});

/** Blocks valid in a user message (spec 2 Resources: Message): text and images. */
const UserBlockSchema = v.variant(
  'type',
  [
    v.object({
      type: v.literal('text'),
      text: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty')),
    }),
    v.object({
      type: v.literal('image'),
      source: v.variant(
        'type',
        [
          v.object({
            type: v.literal('base64'),
            media_type: v.picklist(IMAGE_MEDIA_TYPES, `must be one of ${IMAGE_MEDIA_TYPES.join(', ')}`),
            data: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.base64('must be base64')),
          }),
          v.object({
            type: v.literal('url'),
            url: v.pipe(v.string(), v.url('must be a URL'), v.startsWith('http', 'must be an http(s) URL')),
          }),
        ],
        'must be {type: base64, media_type, data} or {type: url, url}',
      ),
    }),
  ],
  'must be a text or image block (the only blocks a user message may carry)',
);

const CancelSchema = v.object({
  reason: v.optional(
    v.nullable(v.pipe(v.string('must be a string'), v.maxLength(1000, 'is longer than 1000 characters'))),
  ),
});

const ConfirmSchema = v.object({
  decision: v.picklist(['allow', 'deny'], 'must be allow or deny'),
  // null is the default, as an absent scope (like the other optional fields)
  scope: v.nullish(v.picklist(['once', 'session'], 'must be once or session'), 'once'),
});

export function mountTurnRoutes(app: Hono<AgentEnv>, deps: AgentAppDeps): void {
  app.post('/sessions/:session_id/turns', async (c) => {
    const body = validateInput(SubmitTurnSchema, await readJsonBody(c));
    const content = decodeUserContent(body.content);
    const session = await requireOpenSession(deps.db, c.req.param('session_id'));
    if (body.per_message_override) assertModelRef(deps, body.per_message_override);
    const engine = engineOf(deps);
    const input: SubmitTurnInput = {
      sessionId: session.id,
      content,
      perMessageOverride: body.per_message_override ?? null,
    };
    return c.json(await engine.submit(input), 202);
  });

  app.post('/sessions/:session_id/turns/:turn_id/cancel', async (c) => {
    const body = validateInput(CancelSchema, await readJsonBody(c, { optional: true }));
    const session = await requireOpenSession(deps.db, c.req.param('session_id'));
    const result = await engineOf(deps).cancel(session.id, c.req.param('turn_id'), body.reason ?? null);
    return c.json(result, 202);
  });

  app.post('/sessions/:session_id/turns/:turn_id/confirmations/:request_id', async (c) => {
    const body = validateInput(ConfirmSchema, await readJsonBody(c));
    const session = await requireSession(deps.db, c.req.param('session_id'));
    const result = await engineOf(deps).confirm({
      sessionId: session.id,
      turnId: c.req.param('turn_id'),
      requestId: c.req.param('request_id'),
      decision: body.decision,
      scope: body.scope,
    });
    return c.json(result);
  });
}

/** An explicit per-turn model must exist: slot 1 would otherwise pass it over for the next slot unasked. */
function assertModelRef(deps: AgentAppDeps, ref: string): void {
  try {
    resolveModelRef(ref, deps.policy.current(), deps.registry, 'per_message_override');
  } catch (err) {
    if (!isSvcError(err)) throw err;
    const field = 'per_message_override';
    const issue = err.message.slice(`${field}: `.length);
    throw new SvcError('validation_error', {
      message: err.message,
      details: { field, issues: [{ field, message: issue }] },
    });
  }
}

/** The turn's content blocks, or 400 invalid_content naming the first bad block. */
export function decodeUserContent(blocks: readonly unknown[]): SubmitTurnInput['content'] {
  if (blocks.length === 0)
    throw new SvcError('invalid_content', {
      message: 'content: a turn needs at least one text or image block.',
      details: { field: 'content' },
    });
  return blocks.map((block, i) => {
    const parsed = v.safeParse(UserBlockSchema, block);
    if (parsed.success) return parsed.output;
    const issue = parsed.issues[0];
    const field = `content[${i}]${issue.path ? `.${formatPath(issue.path)}` : ''}`;
    throw new SvcError('invalid_content', {
      message: `${field}: ${issueMessage(issue)}`,
      details: { field },
    });
  });
}
