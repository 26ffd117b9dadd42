/**
 * @module Confinement of every tool path to the session's workspace (issue 10 "Tools"): `..`, absolute paths
 * elsewhere and symlinks that lead out are refused with `outside_workspace`. The check runs on the REAL path
 * (realpath of the target, or of its nearest existing parent for a path not created yet) and each tool calls it
 * right before it opens, then opens the checked real path with O_NOFOLLOW, which narrows the swap-in race to
 * the parent directories between check and open.
 */
import { constants } from 'node:fs';
import { readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { fail, fsFailure, isFailure, type ToolFailure } from './result.ts';

export interface WorkspacePath {
  /** The real absolute path inside the workspace (symlinks resolved) to open. */
  real: string;
  /** The path relative to the workspace root, as shown to the model ('.' for the root). */
  rel: string;
  /** False when the target does not exist yet (real = real parent + the missing components). */
  exists: boolean;
  /** The workspace's own real path. */
  root: string;
}

/** O_NOFOLLOW where the platform has it: the final component must not be a symlink at open time. */
export const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * Resolves `input` against the workspace and checks the real path is inside it. `workspace` is the session's
 * real root as pinned (sessions/workspace-roots.ts): when that folder now resolves elsewhere (replaced by a
 * symlink), every path is outside.
 */
export async function resolveWorkspacePath(
  workspace: string,
  input: string,
): Promise<WorkspacePath | ToolFailure> {
  if (input.includes('\0')) return fail('invalid_input', 'input field `path`: contains a NUL byte');
  const root = path.resolve(workspace);
  let now: string;
  try {
    now = await realpath(root);
  } catch {
    return fail('not_found', 'the workspace directory no longer exists');
  }
  if (now !== root)
    return fail(
      'outside_workspace',
      `the workspace directory ${root} now leads to ${now} (it was replaced by a symlink); tools only reach the folder the session was created on`,
    );
  const lexical = path.isAbsolute(input) ? path.resolve(input) : path.resolve(root, input);
  if (!path.isAbsolute(input) && !isInside(root, lexical)) return outside(input);
  const found = await realpathOfNearest(lexical, input);
  if (isFailure(found)) return found;
  if (!isInside(root, found.real)) return outside(input);
  const rel = path.relative(root, found.real) || '.';
  return { real: found.real, rel, exists: found.exists, root };
}

/** True when `target` is `root` or below it (both absolute and normalised). */
export function isInside(root: string, target: string): boolean {
  if (root === path.sep) return true;
  return target === root || target.startsWith(root + path.sep);
}

// --- internal ---

function outside(input: string): ToolFailure {
  return fail(
    'outside_workspace',
    `${input} resolves outside the workspace; tools only reach files inside it`,
  );
}

/** Symlinks followed while resolving one path (Linux's own bound, beyond which open says ELOOP). */
const MAX_LINKS = 40;

/**
 * The real path of `lexical`, or of its nearest existing ancestor plus the missing components. A dangling
 * symlink on the way is followed to where it points (its target does not exist yet), so a path through a
 * link that leads out is seen as outside even though nothing exists there.
 */
async function realpathOfNearest(
  lexical: string,
  input: string,
  links = 0,
): Promise<{ real: string; exists: boolean } | ToolFailure> {
  const missing: string[] = [];
  let current = lexical;
  for (;;) {
    try {
      const real = await realpath(current);
      return { real: path.join(real, ...missing), exists: missing.length === 0 };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return fsFailure(err, input);
      const target = code === 'ENOENT' ? await danglingTarget(current) : undefined;
      if (target !== undefined) {
        if (links >= MAX_LINKS) return fsFailure({ code: 'ELOOP' }, input);
        return realpathOfNearest(path.join(target, ...missing), input, links + 1);
      }
      const parent = path.dirname(current);
      if (parent === current) return fsFailure(err, input);
      missing.unshift(path.basename(current));
      current = parent;
    }
  }
}

/**
 * Where `file` points when it is a symlink: its target, taken from the real directory holding the link (as
 * the kernel reads a relative target), not resolved further; undefined otherwise.
 */
async function danglingTarget(file: string): Promise<string | undefined> {
  try {
    const target = await readlink(file);
    return path.resolve(await realpath(path.dirname(file)), target);
  } catch {
    return undefined; // EINVAL (not a symlink), ENOENT (not there either)
  }
}
