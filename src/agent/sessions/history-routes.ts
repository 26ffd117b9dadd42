/**
 * @module History reads of spec 2 §Messages and events: canonical messages paged by message-id cursors and
 * trace-store events filtered for the dashboard (DECISIONS §5 query parameters and limits).
 */
import type { Hono } from 'hono';
import * as v from 'valibot';
import { EVENT_TYPES } from '../../events/catalog.ts';
import { limitSchema, validateQuery } from '../../http/validation.ts';
import type { AgentAppDeps } from '../app.ts';
import type { AgentEnv } from '../env.ts';
import { listEvents } from './events.ts';
import { listMessages } from './messages.ts';
import { requireSession } from './store.ts';

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);
const IdSchema = v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(200, 'is too long'));
/** Event ids are ULIDs (spec 2 "Event"); a cursor of another shape names no position in their order. */
const EventIdSchema = v.pipe(
  v.string(),
  v.regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be an event id (a ULID, as next_cursor gives)'),
);

const ListMessagesSchema = v.object({
  before: v.optional(IdSchema),
  after: v.optional(IdSchema),
  // default 50: spec 2's snapshot page; max 1000: DECISIONS §5 gives messages the events' limits
  limit: limitSchema(50, 1000),
});

const ListEventsSchema = v.object({
  types: v.optional(
    v.pipe(
      v.string(),
      v.transform((text) =>
        text
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ),
      v.check(
        (list) => list.every((t) => KNOWN_TYPES.has(t)),
        (issue) =>
          `has an unknown event type ${JSON.stringify((issue.input as string[]).find((t) => !KNOWN_TYPES.has(t)))}`,
      ),
    ),
  ),
  turn_id: v.optional(IdSchema),
  after: v.optional(EventIdSchema),
  limit: limitSchema(100, 1000),
});

export function mountHistoryRoutes(app: Hono<AgentEnv>, deps: AgentAppDeps): void {
  app.get('/sessions/:session_id/messages', async (c) => {
    const q = validateQuery(ListMessagesSchema, c.req.queries());
    const session = await requireSession(deps.db, c.req.param('session_id'));
    const page = await listMessages(deps.db, session.id, q);
    return c.json(page);
  });

  app.get('/sessions/:session_id/events', async (c) => {
    const q = validateQuery(ListEventsSchema, c.req.queries());
    const session = await requireSession(deps.db, c.req.param('session_id'));
    // what the stream already sent is read back: events published before this request (a turn.completed a
    // socket client just got) are committed first. The store answered the session read, so this waits at
    // most for the trace writer's current commit or retry (up to 1 s after a PostgreSQL outage).
    await deps.flushEvents?.();
    return c.json(await listEvents(deps.db, session.id, q));
  });
}
