/**
 * Loaded into a benchmark server with `--import` (request-counts.ts): SIGUSR2 starts a v8.GCProfiler and the
 * next SIGUSR2 stops it, writing the garbage collections of that window to `<GC_WINDOW_DIR>/gc-<pid>.json`
 * with the heap in use at its start and end (what the server allocated, and what scavenges promoted).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';

let profiler: v8.GCProfiler | undefined;
let startUsed = 0;
const used = () => v8.getHeapStatistics().used_heap_size;

process.on('SIGUSR2', () => {
  if (!profiler) {
    profiler = new v8.GCProfiler();
    profiler.start();
    startUsed = used();
    return;
  }
  const result = profiler.stop();
  profiler = undefined;
  const out = join(process.env.GC_WINDOW_DIR ?? '/tmp', `gc-${process.pid}.json`);
  writeFileSync(out, JSON.stringify({ startUsed, endUsed: used(), ...result }));
});
