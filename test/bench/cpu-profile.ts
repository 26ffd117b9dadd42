/**
 * Reads a V8 `.cpuprofile` written by `node --cpu-prof` from the dist/ bundle and says where the samples
 * went: bundle frames are mapped back through the bundle's source maps to src/ or, for the dependencies
 * tsup bundles, to node_modules/<package>/…; dependencies are grouped by package (bundled or loaded from
 * node_modules), and native frames (JSON.parse, writev, …) are named with the JS function that called them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface ProfileLine {
  /** `src/gateway/pipeline.ts:120 handle`, `hono/dist/…:44 fn`, `(native) parse ← src/…`, `(garbage collector)`. */
  frame: string;
  pct: number;
}

export interface ProfileSummary {
  /** Samples in the window that were not idle; every percentage below is of these. */
  busySamples: number;
  /** Idle samples in the window, in % of all its samples. */
  idlePct: number;
  /** Self time by owner: each src/ file, each package, node internals, natives, GC. */
  owners: ProfileLine[];
  /** Each sample charged to the nearest src/ file or package on its stack (node internals and natives bubble up). */
  ownersAttributed: ProfileLine[];
  /** Top self time of functions in src/. */
  srcSelf: ProfileLine[];
  /** Each sample charged to the innermost src/ function on its stack (its dependency, node and native calls included). */
  srcAttributed: ProfileLine[];
  /** Top inclusive time (self + callees) of functions in src/. */
  srcTotal: ProfileLine[];
  /** Top self time of every frame. */
  allSelf: ProfileLine[];
}

/** Summarizes the samples of one profile taken within `windowUs` (monotonic µs, as process.hrtime). */
export function summarizeProfile(path: string, options: { top?: number; windowUs?: [number, number] } = {}) {
  const top = options.top ?? 15;
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const stacks = new StackReader(profile);
  const tallies = {
    self: new Tally(),
    owners: new Tally(),
    ownersAttributed: new Tally(),
    srcAttributed: new Tally(),
    total: new Tally(),
  };
  let idle = 0;
  let busy = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i];
    const [from, to] = options.windowUs ?? [-Infinity, Infinity];
    if (at < from || at > to) return;
    const stack = stacks.stack(id); // leaf first
    if (stack[0].key === '(idle)') {
      idle++;
      return;
    }
    busy++;
    tallies.self.add(stack[0].key);
    tallies.owners.add(stack[0].owner);
    tallies.ownersAttributed.add(stack.find((f) => f.attributable)?.owner ?? stack[0].owner);
    tallies.srcAttributed.add(stack.find((f) => f.src)?.key ?? `(no src/ frame) ${stack[0].owner}`);
    for (const key of new Set(stack.filter((f) => f.src).map((f) => f.key))) tallies.total.add(key);
  });
  return {
    busySamples: busy,
    idlePct: Math.round((idle / Math.max(1, idle + busy)) * 1000) / 10,
    owners: tallies.owners.top(busy, top),
    ownersAttributed: tallies.ownersAttributed.top(busy, top),
    srcSelf: tallies.self.top(busy, top, (k) => k.startsWith('src/')),
    srcAttributed: tallies.srcAttributed.top(busy, top),
    srcTotal: tallies.total.top(busy, top),
    allSelf: tallies.self.top(busy, top),
  } satisfies ProfileSummary;
}

// --- internal ---

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: CallFrame; children?: number[] }>;
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface Frame {
  key: string;
  owner: string;
  /** A function in src/. */
  src: boolean;
  /** In src/ or a package: not node internals, natives or V8 meta frames. */
  attributable: boolean;
}

/** Named frames of each profile node and its ancestors, memoized. */
class StackReader {
  private readonly byId: Map<number, CpuProfile['nodes'][number]>;
  private readonly parentOf = new Map<number, number>();
  private readonly frames = new Map<number, Frame>();
  private readonly stacks = new Map<number, Frame[]>();
  private readonly namer = new FrameNamer();

  constructor(profile: CpuProfile) {
    this.byId = new Map(profile.nodes.map((n) => [n.id, n]));
    for (const n of profile.nodes) for (const c of n.children ?? []) this.parentOf.set(c, n.id);
  }

  /** Frames from `id` up to the root, leaf first. */
  stack(id: number): Frame[] {
    let s = this.stacks.get(id);
    if (!s) {
      const parent = this.parentOf.get(id);
      s = [this.frame(id), ...(parent === undefined ? [] : this.stack(parent))];
      this.stacks.set(id, s);
    }
    return s;
  }

  private frame(id: number): Frame {
    let f = this.frames.get(id);
    if (!f) {
      const parent = this.parentOf.get(id);
      f = this.namer.name(
        this.byId.get(id)!.callFrame,
        parent === undefined ? undefined : () => this.frame(parent),
      );
      this.frames.set(id, f);
    }
    return f;
  }
}

const META = new Set(['(program)', '(garbage collector)', '(idle)', '(root)']);

class FrameNamer {
  private readonly maps = new Map<string, SourceMap | null>();

  name(cf: CallFrame, parent: (() => Frame) | undefined): Frame {
    const fn = cf.functionName || '(anonymous)';
    const internal = { src: false, attributable: false };
    if (META.has(fn) && cf.url === '') return { key: fn, owner: fn, ...internal };
    if (cf.url === '') {
      const caller = parent?.().key ?? '?';
      return { key: `(native) ${fn} ← ${caller}`, owner: '(native)', ...internal };
    }
    if (cf.url.startsWith('node:')) {
      return { key: `${cf.url}:${cf.lineNumber + 1} ${fn}`, owner: 'node:internal', ...internal };
    }
    const file = cf.url.startsWith('file://') ? fileURLToPath(cf.url) : cf.url;
    // A package loaded from node_modules (one tsup leaves external) …
    const mod = packageFrame(file, cf.lineNumber + 1, fn);
    if (mod) return mod;
    const original = this.original(file, cf.lineNumber, cf.columnNumber);
    if (original) {
      // … or bundled into dist/: its source map names ../node_modules/<package>/… (packages' own maps are
      // chained, so that can be e.g. pg-protocol/src/parser.ts: the package is checked before src/).
      const bundled = packageFrame(original.source, original.line, fn);
      if (bundled) return bundled;
      const at = original.source.lastIndexOf('src/');
      const source = at >= 0 ? original.source.slice(at) : original.source;
      return {
        key: `${source}:${original.line} ${fn}`,
        owner: source,
        src: source.startsWith('src/'),
        attributable: true,
      };
    }
    return { key: `${file}:${cf.lineNumber + 1} ${fn}`, owner: file, src: false, attributable: true };
  }

  private original(file: string, line: number, column: number) {
    let map = this.maps.get(file);
    if (map === undefined) {
      map = existsSync(`${file}.map`) ? new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8'))) : null;
      this.maps.set(file, map);
    }
    const entry = map?.findEntry(line, column);
    if (!entry || !('originalSource' in entry)) return undefined;
    return { source: entry.originalSource, line: entry.originalLine + 1 };
  }
}

/** A frame in node_modules/<package>/… (the innermost node_modules, for nested installs), owned by the package. */
function packageFrame(path: string, line: number, fn: string): Frame | undefined {
  const mod = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(path);
  if (!mod) return undefined;
  return { key: `${mod[1]}/${mod[2]}:${line} ${fn}`, owner: mod[1], src: false, attributable: true };
}

class Tally {
  private readonly counts = new Map<string, number>();

  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  top(total: number, n: number, keep: (key: string) => boolean = () => true): ProfileLine[] {
    return [...this.counts]
      .filter(([k]) => keep(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([frame, count]) => ({ frame, pct: Math.round((count / total) * 1000) / 10 }));
  }
}
