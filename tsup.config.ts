import { defineConfig } from 'tsup';

export default defineConfig([
  // One bundle behind bin/svc; runtime dependencies stay in node_modules.
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
