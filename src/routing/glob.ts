/**
 * @module Workspace path matching for routing.yaml: a plain path matches that directory and
 * everything below it; a glob supports `*` (within one path segment), `**` (any depth) and `?`.
 */

/** Compiles once at policy load; the returned test runs per request. */
export function compileWorkspaceMatcher(pattern: string): (path: string) => boolean {
  const pat = trimSlash(pattern);
  if (!/[*?]/.test(pat)) {
    if (pat === '/') return (path) => path.startsWith('/');
    return (path) => {
      const p = trimSlash(path);
      return p === pat || p.startsWith(`${pat}/`);
    };
  }
  const re = new RegExp(`^${globToRegexSource(pat)}$`);
  return (path) => re.test(trimSlash(path));
}

/** True for patterns that match every absolute path (`/`, `**`, `/**`). */
export function isCatchAll(pattern: string): boolean {
  const p = trimSlash(pattern);
  return p === '/' || p === '**' || p === '/**';
}

// --- internal ---

function trimSlash(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

function globToRegexSource(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      const slashBefore = i === 0 || glob[i - 1] === '/';
      if (glob[i + 2] === '/' && slashBefore) {
        out += '(?:.*/)?'; // `a/**/b` also matches `a/b`
        i += 2;
      } else if (i + 2 === glob.length && slashBefore && out.endsWith('/')) {
        out = `${out.slice(0, -1)}(?:/.*)?`; // `a/**` also matches `a` itself
        i += 1;
      } else {
        out += '.*';
        i += 1;
      }
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return out;
}
