/**
 * @module Which code a `svc` run loaded: every module URL Node loaded (through a load hook given with
 * NODE_OPTIONS=--import) mapped back through the bundle's source maps to its src/ files and the bundled
 * packages, plus the Node built-ins it loaded (process.moduleLoadList).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, type RunOptions, runSvc, type SvcResult } from './svc.ts';

export interface LoadedCode extends SvcResult {
  /** src/ files (`src/gateway/server.ts`) and bundled packages (`hono`, `@hono/node-server`). */
  sources: Set<string>;
  /** Node's own modules (`NativeModule http`, `NativeModule internal/deps/undici/undici`). */
  builtins: Set<string>;
}

/** Runs `svc <args>` to completion and says what it loaded. */
export async function runSvcLoading(
  args: string[],
  options: RunOptions & { out: string },
): Promise<LoadedCode> {
  const probe = [
    "import { registerHooks } from 'node:module';",
    "import { writeFileSync } from 'node:fs';",
    'const urls = [];',
    'registerHooks({ load(url, context, next) { urls.push(url); return next(url, context); } });',
    "process.on('exit', () => writeFileSync(process.env.LOADED_CODE_OUT, JSON.stringify({ urls, builtins: process.moduleLoadList })));",
  ].join('\n');
  const env = {
    ...options.env,
    LOADED_CODE_OUT: options.out,
    NODE_OPTIONS: `--import data:text/javascript,${encodeURIComponent(probe)}`,
  };
  const result = await runSvc(args, { ...options, env });
  const { urls, builtins } = JSON.parse(readFileSync(options.out, 'utf8')) as {
    urls: string[];
    builtins: string[];
  };
  const sources = new Set<string>();
  const dist = join(ROOT, 'dist');
  for (const url of urls) {
    if (!url.startsWith('file:')) continue;
    const path = fileURLToPath(url);
    if (!path.startsWith(dist)) continue;
    const map = JSON.parse(readFileSync(`${path}.map`, 'utf8')) as { sources: string[] };
    for (const s of map.sources) sources.add(ownerOf(s));
  }
  return { ...result, sources, builtins: new Set(builtins) };
}

// --- internal ---

/** `../src/a/b.ts` → `src/a/b.ts`; `../node_modules/@hono/node-server/dist/x.mjs` → `@hono/node-server`. */
function ownerOf(source: string): string {
  const nm = source.lastIndexOf('node_modules/');
  if (nm < 0) return source.replace(/^(\.\.\/)+/, '');
  const parts = source.slice(nm + 'node_modules/'.length).split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}
