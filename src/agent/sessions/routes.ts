/**
 * @module Session endpoints of spec 2 §Sessions: create, list (DECISIONS §5 query), read with a fresh
 * attach token, end or purge, and the active-model PATCH handed to the turn engine.
 */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { Context, Hono } from 'hono';
import * as v from 'valibot';
import { readJsonBody } from '../../http/json-body.ts';
import { limitSchema, validateInput, validateQuery } from '../../http/validation.ts';
import { SvcError } from '../../lib/errors.ts';
import { formatUs } from '../../lib/time.ts';
import type { AgentAppDeps } from '../app.ts';
import type { AgentEnv } from '../env.ts';
import { encodeSession, encodeSessionSummary } from './encode.ts';
import { resolveDefaultModel, resolveModelRef } from './models.ts';
import {
  createSession,
  endSession,
  getSession,
  listSessions,
  purgeSession,
  requireOpenSession,
  requireSession,
} from './store.ts';

/** How long DELETE ?purge=true waits for a running turn to publish its end after cancelling it. */
export const PURGE_TURN_WAIT_MS = 10_000;

const CreateSessionSchema = v.object({
  workspace_path: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty')),
  initial_active_model: v.optional(
    v.nullable(v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'))),
  ),
});

const ListSessionsSchema = v.object({
  // matched against the absolute workspace_path of each session: a relative one would be read against the
  // server's own working directory, a folder the client never named
  workspace: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.check(isAbsolute, "must be an absolute path, as a session's workspace_path is"),
    ),
  ),
  is_worker: v.optional(v.picklist(['true', 'false'], 'must be true or false')),
  cursor: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  limit: limitSchema(50, 200),
});

const DeleteSessionSchema = v.object({
  purge: v.optional(v.picklist(['true', 'false'], 'must be true or false'), 'false'),
});

const PatchSessionSchema = v.object({
  // v.nullable's second argument is a default, not a message: an absent key fails in the inner schema
  active_model: v.nullable(
    v.pipe(v.string('must be a model id, alias or null'), v.minLength(1, 'must not be empty')),
  ),
});

export function mountSessionRoutes(app: Hono<AgentEnv>, deps: AgentAppDeps): void {
  app.post('/sessions', async (c) => {
    const body = validateInput(CreateSessionSchema, await readJsonBody(c));
    const workspace = existingDirectory(body.workspace_path);
    const policy = deps.policy.current();
    const explicit = body.initial_active_model ?? undefined;
    const model =
      explicit === undefined
        ? resolveDefaultModel(policy, workspace)
        : resolveModelRef(explicit, policy, deps.registry, 'initial_active_model');
    const row = await createSession(deps.db, {
      id: deps.newId('sess_'),
      workspace_path: workspace,
      workspace_root: realRoot(workspace),
      active_model: model,
      routing_policy_version: policy.version,
      sticky: explicit !== undefined,
      now: formatUs(deps.clock.nowUs()),
    });
    return c.json(
      {
        id: row.id,
        workspace_path: row.workspace_path,
        active_model: row.active_model,
        created_at: row.created_at,
        routing_policy_version: row.routing_policy_version,
      },
      201,
    );
  });

  app.get('/sessions', async (c) => {
    const q = validateQuery(ListSessionsSchema, c.req.queries());
    const page = await listSessions(deps.db, {
      workspace: q.workspace === undefined ? undefined : resolve(q.workspace),
      is_worker: q.is_worker === undefined ? undefined : q.is_worker === 'true',
      cursor: q.cursor,
      limit: q.limit,
    });
    return c.json({ sessions: page.sessions.map(encodeSessionSummary), next_cursor: page.next_cursor });
  });

  app.get('/sessions/:session_id', async (c) => {
    const row = await requireSession(deps.db, c.req.param('session_id'));
    const { token } = deps.attachTokens.issue(row.id);
    return c.json({
      ...encodeSession(row),
      attach_token: token,
      ws_url: `ws://${wsAuthority(c, deps)}/sessions/${row.id}/stream?attach=${token}`,
    });
  });

  app.delete('/sessions/:session_id', async (c) => {
    const { purge } = validateQuery(DeleteSessionSchema, c.req.queries());
    await readJsonBody(c, { optional: true }); // a form post must not end a session: any body is JSON or 415
    const row = await requireSession(deps.db, c.req.param('session_id'));
    const now = formatUs(deps.clock.nowUs());
    // ended before its turn is looked up: no turn can claim the session after the end, and one that claimed
    // it before (a submission racing this DELETE) is read here and cancelled
    const ended = await endSession(deps.db, row.id, now);
    const turnId = ended?.current_turn_id ?? null;
    if (turnId !== null) await stopTurn(deps, row.id, turnId, purge === 'true');
    if (purge === 'true') {
      await deps.flushEvents?.();
      await purgeSession(deps.db, row.id);
      deps.onSessionEnded?.(row.id);
      deps.engine?.forgetSession?.(row.id);
      return c.json({ id: row.id, ended_at: row.ended_at ?? now });
    }
    deps.onSessionEnded?.(row.id);
    deps.engine?.forgetSession?.(row.id);
    return c.json({ id: row.id, ended_at: ended?.ended_at ?? now });
  });

  app.patch('/sessions/:session_id', async (c) => {
    const body = validateInput(PatchSessionSchema, await readJsonBody(c));
    const row = await requireOpenSession(deps.db, c.req.param('session_id'));
    const model =
      body.active_model === null
        ? null
        : resolveModelRef(body.active_model, deps.policy.current(), deps.registry, 'active_model');
    const result = await engineOf(deps).setActiveModel(row.id, model);
    return c.json(result);
  });
}

/** The engine, or 501 while this build has none (the turn machinery lands separately). */
export function engineOf(deps: AgentAppDeps) {
  if (!deps.engine)
    throw new SvcError('not_implemented', {
      message: 'Turns are not implemented yet in this version of svc.',
    });
  return deps.engine;
}

// --- internal ---

/** The path, normalised, when it is absolute and names a directory; else 400 workspace_not_found (README). */
function existingDirectory(requested: string): string {
  if (!isAbsolute(requested)) {
    throw new SvcError('workspace_not_found', {
      message: `workspace_path ${requested} is not an absolute path; give the directory's full path (relative paths and ~ are not expanded).`,
      details: { field: 'workspace_path', workspace_path: requested },
    });
  }
  const path = resolve(requested);
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) {
    throw new SvcError('workspace_not_found', {
      message: `workspace_path ${path} is not an existing directory.`,
      details: { field: 'workspace_path', workspace_path: path },
    });
  }
  return path;
}

/**
 * The folder the session's tools are confined to: the workspace's real path now, kept in the session row so
 * a workspace later swapped for a symlink (even while the server is down) does not move the session.
 */
function realRoot(workspace: string): string {
  try {
    return realpathSync(workspace);
  } catch {
    return workspace; // gone since its check: the tools find nothing there either
  }
}

/** Cancels the running turn; a purge then waits (bounded) for its end so no event outlives the purge. */
async function stopTurn(deps: AgentAppDeps, sessionId: string, turnId: string, wait: boolean): Promise<void> {
  if (!deps.engine) return;
  const ended = wait ? deps.turnEnds.wait(turnId, PURGE_TURN_WAIT_MS) : undefined;
  try {
    await deps.engine.cancel(sessionId, turnId, 'session_ended');
  } catch (err) {
    // the turn finished on its own in the meantime: nothing left to stop
    if (!(err instanceof SvcError && ['turn_not_found', 'turn_already_completed'].includes(err.code)))
      throw err;
  }
  if (!ended) return;
  const row = await getSession(deps.db, sessionId);
  if (row?.current_turn_id === turnId) await ended;
}

/** `host:port` the client reached us on (already checked against the allow-list), else the bound address. */
function wsAuthority(c: Context<AgentEnv>, deps: AgentAppDeps): string {
  return c.req.header('host') ?? deps.boundAuthority?.() ?? '127.0.0.1:8421';
}
