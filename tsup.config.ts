import { defineConfig } from 'tsup';

// One bundle behind bin/svc; runtime dependencies stay in node_modules.
export default defineConfig({
  entry: { main: 'src/cli/main.ts' },
  format: ['esm'],
  target: 'node24',
  platform: 'node',
  outDir: 'dist',
  clean: true,
  sourcemap: true,
  splitting: true,
  dts: false,
  // tsup strips `node:` by default, which breaks `node:sqlite` (no bare `sqlite` builtin exists).
  removeNodeProtocol: false,
});
