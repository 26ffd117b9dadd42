/**
 * @module The directory walk list_files and search_files share: entries in name order, depth first, never
 * following symlinks (a link is listed, not entered) and never entering .git or node_modules.
 */
import type { Dirent } from 'node:fs';
import { opendir } from 'node:fs/promises';
import path from 'node:path';

/** Directories a recursive walk lists but never enters (issue 10 "Tools"). */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);

export interface WalkEntry {
  /** Absolute path (below the real start directory). */
  abs: string;
  kind: 'file' | 'dir' | 'symlink' | 'other';
}

/** Yields the entries below `dir`; `recursive` false yields only its direct children. */
export async function* walk(dir: string, recursive: boolean, signal: AbortSignal): AsyncGenerator<WalkEntry> {
  const entries = await readSorted(dir);
  for (const entry of entries) {
    if (signal.aborted) return;
    const abs = path.join(dir, entry.name);
    const kind = kindOf(entry);
    yield { abs, kind };
    if (recursive && kind === 'dir' && !SKIPPED_DIRS.has(entry.name)) {
      try {
        yield* walk(abs, true, signal);
      } catch {
        // An unreadable or vanished subdirectory is skipped; the walk goes on.
      }
    }
  }
}

// --- internal ---

async function readSorted(dir: string): Promise<Dirent[]> {
  const out: Dirent[] = [];
  for await (const entry of await opendir(dir)) out.push(entry);
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function kindOf(entry: Dirent): WalkEntry['kind'] {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isDirectory()) return 'dir';
  if (entry.isFile()) return 'file';
  return 'other';
}
