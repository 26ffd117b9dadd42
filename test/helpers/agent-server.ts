/**
 * Helpers for agent-server e2e tests: `svc serve` in an isolated home with its own trace store and a
 * workspace folder, a JSON request helper, raw requests with any Host header, and SQL over the store.
 */
import { mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { isolatedEnv, makeTempDir, type RunningSvc, startSvc } from './svc.ts';

export interface AgentServer {
  svc: RunningSvc;
  url: string;
  home: string;
  db: string;
  workspace: string;
  env: NodeJS.ProcessEnv;
  /** A JSON request; `body` as a string is sent verbatim. */
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

export interface AgentServerOptions {
  env?: Record<string, string | undefined>;
  args?: string[];
  /** Reuse an earlier server's home (same store) instead of a fresh one. */
  home?: string;
}

/** Starts `svc serve` and registers its stop and the temp dir's removal in `t.after`. */
export async function startAgentServer(
  t: { after: (fn: () => unknown) => void },
  options: AgentServerOptions = {},
): Promise<AgentServer> {
  let home = options.home;
  if (!home) {
    const tmp = makeTempDir('svc-agent-');
    t.after(() => tmp.cleanup());
    home = tmp.dir;
  }
  const workspace = join(home, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const db = join(home, 'svc.db');
  const env = isolatedEnv(home, { SVC_DB_PATH: db, ...options.env });
  const svc = await startSvc(['serve', '--port', '{port}', ...(options.args ?? [])], {
    env,
    readyPath: '/health',
  });
  t.after(() => svc.stop());
  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${svc.url}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };
  return { svc, url: svc.url, home, db, workspace, env, api };
}

/** A request with arbitrary Host/Origin headers (fetch does not allow overriding Host). */
export function rawRequest(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Uint8Array,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `fn` on a connection to the store (WAL: the running server keeps writing). */
export function withStore<T>(path: string, fn: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(path, { timeout: 10_000 });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}
