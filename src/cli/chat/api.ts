/**
 * @module The REST calls `svc chat` makes on the agent server (spec 2 §Endpoints), over ofetch: no retries
 * (a turn submission must not be sent twice), the service error body turned into one sentence.
 */
import { FetchError, ofetch } from 'ofetch';
import { SvcError } from '../../lib/errors.ts';

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

export interface ChatApi {
  createSession(workspace: string, model: string | undefined): Promise<{ id: string }>;
  /** The session with a fresh attach token in its ws_url. */
  getSession(id: string): Promise<SessionView>;
  setModel(id: string, model: string): Promise<{ active_model: string; swap_queued: boolean }>;
  submitTurn(sessionId: string, text: string): Promise<{ turn_id: string }>;
  cancelTurn(sessionId: string, turnId: string, reason: string): Promise<void>;
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
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    try {
      return await api<T>(path, { method, body: body as Record<string, unknown> | undefined });
    } catch (err) {
      throw toSvcError(err, baseUrl);
    }
  };
  const enc = encodeURIComponent;
  return {
    createSession: (workspace, model) =>
      call('POST', '/sessions', {
        workspace_path: workspace,
        ...(model ? { initial_active_model: model } : {}),
      }),
    getSession: (id) => call('GET', `/sessions/${enc(id)}`),
    setModel: (id, model) => call('PATCH', `/sessions/${enc(id)}`, { active_model: model }),
    submitTurn: (sessionId, text) =>
      call('POST', `/sessions/${enc(sessionId)}/turns`, { content: [{ type: 'text', text }] }),
    cancelTurn: (sessionId, turnId, reason) =>
      call('POST', `/sessions/${enc(sessionId)}/turns/${enc(turnId)}/cancel`, { reason }),
    confirm: (sessionId, turnId, requestId, decision, scope) =>
      call('POST', `/sessions/${enc(sessionId)}/turns/${enc(turnId)}/confirmations/${enc(requestId)}`, {
        decision,
        scope,
      }),
  };
}

/** The server's `{error: {code, message}}` as an SvcError with that code when svc knows it. */
export function toSvcError(err: unknown, baseUrl: string): SvcError {
  if (err instanceof FetchError && err.data && typeof err.data === 'object' && 'error' in err.data) {
    const e = (err.data as { error: { code?: string; message?: string } }).error;
    return new SvcError('io_error', {
      message: `${e.message ?? 'request failed'} (${e.code ?? err.statusCode})`,
      details: { code: e.code, status: err.statusCode },
    });
  }
  if (err instanceof FetchError && err.statusCode === undefined)
    return new SvcError('io_error', {
      message: `Cannot reach the agent server at ${baseUrl}; start it with \`svc serve\` or pass --server.`,
      cause: err,
    });
  return new SvcError('io_error', { message: err instanceof Error ? err.message : String(err), cause: err });
}
