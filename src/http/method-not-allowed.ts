/**
 * @module The not-found handler of service apps that tells a wrong method from an unknown path: a path some
 * route serves under other methods is 405 `method_not_allowed` with an `Allow` header (RFC 9110 §15.5.6),
 * anything else the 404 `not_found` of service-errors.ts. Both in the service error body. The lookup of a
 * path's methods serves the gateway's own not-found handler too (its error shapes differ by path).
 */
import type { Hono, NotFoundHandler } from 'hono';
import { TrieRouter } from 'hono/router/trie-router';
import { SvcError } from '../lib/errors.ts';
import { serviceErrorResponse, serviceNotFound } from './service-errors.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** `app.notFound` for `app`: reads its routes on the first miss (every route is mounted by then). */
export function createServiceNotFound(app: Hono<any>): NotFoundHandler {
  const allowOf = createAllowLookup(app);
  return function serviceNotFoundOrWrongMethod(c) {
    const allow = allowOf(c.req.path);
    if (allow.length === 0) return serviceNotFound(c);
    c.header('allow', allow.join(', '));
    return serviceErrorResponse(
      c,
      new SvcError('method_not_allowed', {
        message: `${c.req.method} is not allowed on ${c.req.path}; use ${allow.join(' or ')}.`,
        details: { allow },
      }),
    );
  };
}

/**
 * The methods `app`'s routes serve on a path (empty: no route has it), read from its routes on the first
 * call (every route is mounted by then); for a not-found handler's 405 `Allow`.
 */
export function createAllowLookup(app: Hono<any>): (path: string) => string[] {
  let router: TrieRouter<true> | undefined;
  return (path) => {
    router ??= routerOf(app);
    return METHODS.filter((m) => router!.match(m, path)[0].length > 0);
  };
}

// --- internal ---

function routerOf(app: Hono<any>): TrieRouter<true> {
  const router = new TrieRouter<true>();
  // middleware is registered for every method ('ALL'); only the routes say which methods a path serves
  for (const r of app.routes) {
    if (r.method === 'ALL') continue;
    router.add(r.method, r.path, true);
    // Hono answers HEAD with the GET route
    if (r.method === 'GET') router.add('HEAD', r.path, true);
  }
  return router;
}
