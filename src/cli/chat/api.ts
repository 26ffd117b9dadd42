/**
 * @module The REST calls `svc chat` makes on the agent server (spec 2 §Endpoints), over ofetch: no retries
 * (a turn submission must not be sent twice), every failure turned into one sentence: the service error
 * body, or a server that cannot be reached, does not answer in time, or does not answer as the agent server.
 */
import { FetchError, type FetchResponse, ofetch } from 'ofetch';
import { ERROR_STATUS, SvcError } from '../../lib/errors.ts';

export interface SessionView {
  id: string;
  workspace_path: string;
  active_model: string;
  turn_count: number;
  cost_so_far_usd: number;
  current_turn_id: string | null;
  ended_at?: string | null;
  ws_url: string;
}

/** A stored message (spec 2 Resources: Message); status beyond spec 2 as the server stores it. */
export interface StoredMessage {
  id: string;
  role: string;
  content: unknown;
  status?: string;
}

export interface MessagesPage {
  messages: StoredMessage[];
  has_more_before: boolean;
  has_more_after: boolean;
}

export interface ChatApi {
  createSession(workspace: string, model: string | undefined): Promise<{ id: string }>;
  /**
   * The session with a fresh attach token in its ws_url, which is reached the way --server is: the server
   * writes ws:// and the Host it was asked on, so behind a TLS proxy (https://) or a path prefix the socket
   * would miss it.
   */
  getSession(id: string): Promise<SessionView>;
  setModel(id: string, model: string): Promise<{ active_model: string; swap_queued: boolean }>;
  submitTurn(sessionId: string, text: string): Promise<{ turn_id: string }>;
  cancelTurn(sessionId: string, turnId: string, reason: string): Promise<void>;
  /** One page of GET …/messages, in id order (with neither cursor: the newest `limit`). */
  listMessages(
    sessionId: string,
    query: { after?: string; before?: string; limit: number },
  ): Promise<MessagesPage>;
  confirm(
    sessionId: string,
    turnId: string,
    requestId: string,
    decision: 'allow' | 'deny',
    scope: 'once' | 'session',
  ): Promise<{ applied: boolean }>;
}

export function createChatApi(baseUrl: string): ChatApi {
  const api = ofetch.create({ baseURL: baseUrl.replace(/\/+$/, ''), retry: 0, timeout: 30_000 });
  /** `fields`: the fields the answer must have, strings unless named `[]` (without them it is no agent server's). */
  const call = async <T>(
    method: string,
    path: string,
    fields: string[],
    body?: unknown,
    query?: Record<string, string | number | undefined>,
  ): Promise<T> => {
    let res: FetchResponse<unknown>;
    try {
      res = await api.raw(path, { method, query, body: body as Record<string, unknown> | undefined });
    } catch (err) {
      throw toSvcError(err, baseUrl);
    }
    if (!isAnswer(res._data, fields)) throw notAgentServer(baseUrl, `${method} ${path}`, res.status);
    return res._data as T;
  };
  const enc = encodeURIComponent;
  return {
    createSession: (workspace, model) =>
      call('POST', '/sessions', ['id'], {
        workspace_path: workspace,
        ...(model ? { initial_active_model: model } : {}),
      }),
    async getSession(id) {
      const path = `/sessions/${enc(id)}`;
      const s = await call<SessionView>('GET', path, ['id', 'ws_url', 'workspace_path']);
      const wsUrl = socketUrl(baseUrl, s.ws_url);
      if (wsUrl === undefined) throw notAgentServer(baseUrl, `GET ${path}`, 200);
      return { ...s, ws_url: wsUrl };
    },
    setModel: (id, model) => call('PATCH', `/sessions/${enc(id)}`, ['active_model'], { active_model: model }),
    submitTurn: (sessionId, text) =>
      call('POST', `/sessions/${enc(sessionId)}/turns`, ['turn_id'], { content: [{ type: 'text', text }] }),
    cancelTurn: (sessionId, turnId, reason) =>
      call('POST', `/sessions/${enc(sessionId)}/turns/${enc(turnId)}/cancel`, [], { reason }),
    listMessages: (sessionId, query) =>
      call('GET', `/sessions/${enc(sessionId)}/messages`, ['messages[]'], undefined, query),
    confirm: (sessionId, turnId, requestId, decision, scope) =>
      call('POST', `/sessions/${enc(sessionId)}/turns/${enc(turnId)}/confirmations/${enc(requestId)}`, [], {
        decision,
        scope,
      }),
  };
}

/**
 * Any failure of a call as one sentence: the agent server's `{error: {code, message}}` (a code of svc's
 * closed set, spec 2 §Errors), or what the server at `baseUrl` failed to do.
 */
export function toSvcError(err: unknown, baseUrl: string): SvcError {
  if (!(err instanceof FetchError))
    return new SvcError('io_error', {
      message: `The request to the agent server at ${baseUrl} failed (${oneLine(err)}).`,
      cause: err,
    });
  const request = `${err.options?.method ?? 'GET'} ${requestPath(err.request, baseUrl)}`;
  if (err.statusCode !== undefined) {
    const e = serviceError(err.data);
    if (!e) return notAgentServer(baseUrl, request, err.statusCode, err);
    return new SvcError('io_error', {
      message: `${e.message} (${e.code})`,
      details: { code: e.code, status: err.statusCode, ...(e.turnId ? { turn_id: e.turnId } : {}) },
    });
  }
  if ((err.cause as Error | undefined)?.name === 'TimeoutError')
    return new SvcError('io_error', {
      message: `The agent server at ${baseUrl} did not answer ${request} within 30 seconds; check that \`svc serve\` there is running and not stuck.`,
      cause: err,
    });
  return new SvcError('io_error', {
    message: `Cannot reach the agent server at ${baseUrl}; start it with \`svc serve\` or pass --server.`,
    cause: err,
  });
}

// --- internal ---

/** The stream path and token of `wsUrl` on the scheme (ws/wss), host and path prefix of `baseUrl`. */
function socketUrl(baseUrl: string, wsUrl: string): string | undefined {
  let stream: URL;
  try {
    stream = new URL(wsUrl);
  } catch {
    return undefined;
  }
  const url = new URL(baseUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${stream.pathname}`;
  url.search = stream.search;
  url.hash = '';
  return url.href;
}

function notAgentServer(baseUrl: string, request: string, status: number, cause?: unknown): SvcError {
  return new SvcError('io_error', {
    message: `${baseUrl} does not answer as an svc agent server (${request}: HTTP ${status}, not the agent server's answer); check that \`svc serve\` is running there, or pass its URL with --server.`,
    cause,
  });
}

/** Codes of a route that is not there: every path svc chat calls is one of the agent server's. */
const NO_SUCH_ROUTE = new Set(['not_found', 'method_not_allowed']);

/** `{error: {code, message}}` with a code svc knows: the agent server's error body. */
function serviceError(data: unknown): { code: string; message: string; turnId?: string } | undefined {
  if (!data || typeof data !== 'object' || !('error' in data)) return undefined;
  const e = (data as { error: unknown }).error as {
    code?: unknown;
    message?: unknown;
    details?: { turn_id?: unknown };
  } | null;
  if (typeof e?.code !== 'string' || !Object.hasOwn(ERROR_STATUS, e.code)) return undefined;
  // another svc server (`svc gateway`) answers in the same body, with no such route
  if (NO_SUCH_ROUTE.has(e.code)) return undefined;
  return {
    code: e.code,
    message: typeof e.message === 'string' ? e.message : e.code.replaceAll('_', ' '),
    // a turn refused after it started (503 routing_failed): its end comes on the stream as well
    ...(typeof e.details?.turn_id === 'string' ? { turnId: e.details.turn_id } : {}),
  };
}

function isAnswer(data: unknown, fields: string[]): boolean {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return false;
  const d = data as Record<string, unknown>;
  return fields.every((f) =>
    f.endsWith('[]') ? Array.isArray(d[f.slice(0, -2)]) : typeof d[f] === 'string',
  );
}

/** The path of the request (the base URL is already in the sentence). */
function requestPath(request: unknown, baseUrl: string): string {
  const url = typeof request === 'string' ? request : (request as Request | undefined)?.url;
  if (!url) return '';
  const base = baseUrl.replace(/\/+$/, '');
  return url.startsWith(base) ? url.slice(base.length) || '/' : url;
}

function oneLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').slice(0, 200);
}
