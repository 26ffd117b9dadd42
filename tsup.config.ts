import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

// Runtime dependencies bundled into dist/ (tsup leaves every package.json dependency external unless it is
// listed in `noExternal`). A bundled package is a few chunks read from dist/ instead of hundreds of files
// resolved and compiled one by one from node_modules: `svc gateway list-keys` loaded 554 modules (kysely
// 262, undici 110, @opentelemetry/api 51 through prom-client, prom-client 32, hono 26, pg and its helpers
// 36, …) before. Each is pure JavaScript with no install script and no platform package; packages they
// depend on themselves (tdigest, @opentelemetry/api, layerr, destr, ufo, node-fetch-native,
// pg-pool, pg-protocol, pg-types, …) are bundled with them.
const BUNDLED: Record<string, string> = {
  kysely: 'the query builder behind every store command: 262 ESM files',
  undici: 'the upstream HTTP agent: 110 CommonJS files, its llhttp WebAssembly is inlined as base64 JS',
  'prom-client': '/metrics: 32 files plus tdigest, bintrees and @opentelemetry/api (51 files)',
  hono: 'the HTTP router of the gateway and the agent server',
  '@hono/node-server': 'the node:http adapter of hono',
  '@hono/node-ws': 'the WebSocket upgrade of svc serve (imports ws, bundled too)',
  ws: 'WebSocket server and the svc chat client; its optional native bufferutil and utf-8-validate stay external',
  valibot: 'schemas of request bodies, the keystore, model config and tool arguments',
  citty: 'the command line parser',
  'js-yaml': 'the YAML model config',
  ulidx: 'ids and key tokens (with layerr)',
  re2js: 'linear-time regular expressions of routing rules and search_files',
  ofetch: 'the HTTP client of svc chat (with destr, ufo, node-fetch-native)',
  pg:
    'the PostgreSQL store (with pg-pool, pg-protocol, pg-types, pgpass, …): pure JavaScript; only its ' +
    'optional native binding pg-native is a compiled addon, and that stays external',
};

// Never bundled. Optional native addons that a bundled package `require`s inside a try block or only on
// request: left as runtime `require` calls, they resolve from node_modules exactly as before when someone
// installs them (none is installed by `npm ci`), and esbuild does not fail on a package it cannot find.
const EXTERNAL = [
  'pg-native', // pg's libpq binding: only loaded for `pg.native` or NODE_PG_FORCE_NATIVE
  'bufferutil', // ws: optional C++ masking, tried unless WS_NO_BUFFER_UTIL
  'utf-8-validate', // ws: optional C++ UTF-8 check (unused on Node 18.14+, which has buffer.isUtf8)
];

// Every runtime dependency needs a decision: one added to package.json fails the build until it is listed
// in BUNDLED (or, with a reason, kept external here).
const KEPT_EXTERNAL: Record<string, string> = {};
const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  dependencies?: Record<string, string>;
};
const undecided = Object.keys(pkg.dependencies ?? {}).filter((d) => !(d in BUNDLED) && !(d in KEPT_EXTERNAL));
if (undecided.length > 0) {
  throw new Error(`tsup.config.ts: bundle or keep external: ${undecided.join(', ')}`);
}

export default defineConfig([
  // One bundle behind bin/svc: src/ and the BUNDLED dependencies; dist/*.js.map map their code back to
  // src/… and node_modules/<package>/… (test/bench/cpu-profile.ts charges samples by those paths).
  {
    entry: { main: 'src/cli/main.ts' },
    format: ['esm'],
    target: 'node24',
    platform: 'node',
    outDir: 'dist',
    // the dashboard build below owns dist/dashboard/ (the two builds run side by side)
    clean: ['!dashboard/**'],
    sourcemap: true,
    splitting: true,
    dts: false,
    noExternal: Object.keys(BUNDLED),
    external: EXTERNAL,
    // Bundled CommonJS packages (undici, ws, pg, prom-client, …) call `require` for node builtins; in ESM
    // output esbuild's shim throws "Dynamic require of … is not supported" unless a `require` exists.
    banner: {
      js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);",
    },
    // tsup strips `node:` by default, which breaks `node:sqlite` (no bare `sqlite` builtin exists).
    removeNodeProtocol: false,
  },
  // The dashboard's browser script with Chart.js inside, served by svc serve at /dashboard/app.js.
  {
    entry: { app: 'src/analytics/dashboard/browser/app.ts' },
    format: ['iife'],
    target: 'es2022',
    platform: 'browser',
    outDir: 'dist/dashboard',
    outExtension: () => ({ js: '.js' }),
    clean: true,
    minify: true,
    sourcemap: false,
    splitting: false,
    dts: false,
  },
]);
