/**
 * @module list_files: the entries of a workspace directory, one per line relative to the workspace root
 * (directories end in `/`, symlinks in `@`, never followed). Recursive listing lists .git and node_modules
 * but does not enter them; the output is capped at 64 KiB with a note.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';
import { cutNote, fail, fsFailure, isFailure, optionalField, parseInput, toolInput } from './result.ts';
import type { ToolContext, ToolResult, WorkspaceTool } from './tool.ts';
import { walk } from './walk.ts';
import { resolveWorkspacePath } from './workspace-path.ts';

export const LIST_CAP_BYTES = 64 * 1024;

const InputSchema = toolInput({
  path: optionalField(v.string('must be a string')),
  recursive: optionalField(v.boolean('must be a boolean')),
});

export const listFilesTool: WorkspaceTool = {
  name: 'list_files',
  description:
    'List the files and directories in a workspace directory (default: the workspace root). recursive lists ' +
    'the whole tree but does not enter .git or node_modules; directories end in "/", symlinks in "@".',
  input_schema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Directory, relative to the workspace root (default ".").' },
      recursive: { type: 'boolean', description: 'List subdirectories too (default false).' },
    },
    additionalProperties: false,
  },
  needsConfirmation: false,
  readOnly: true,
  run: runListFiles,
};

async function runListFiles(input: unknown, ctx: ToolContext): Promise<ToolResult> {
  const parsed = parseInput(InputSchema, input);
  if (!parsed.ok) return parsed;
  const dir = await resolveWorkspacePath(ctx.workspace, parsed.value.path || '.');
  if (isFailure(dir)) return dir;
  try {
    if (!(await stat(dir.real)).isDirectory()) {
      return fail('invalid_input', `${dir.rel} is a file, not a directory; use read_file`);
    }
    const lines: string[] = [];
    let bytes = 0;
    for await (const entry of walk(dir.real, parsed.value.recursive === true, ctx.signal)) {
      const line = path.relative(dir.root, entry.abs) + SUFFIX[entry.kind];
      bytes += Buffer.byteLength(line) + 1;
      if (bytes > LIST_CAP_BYTES) {
        const note = cutNote('listing', LIST_CAP_BYTES, 'list a subdirectory or list without recursive');
        return { ok: true, output: lines.join('\n') + note, truncated: true };
      }
      lines.push(line);
    }
    if (ctx.signal.aborted) return fail('cancelled', 'list_files was cancelled');
    return { ok: true, output: lines.length === 0 ? `(${dir.rel} is empty)` : lines.join('\n') };
  } catch (err) {
    return fsFailure(err, dir.rel);
  }
}

// --- internal ---

const SUFFIX = { file: '', dir: '/', symlink: '@', other: '' } as const;
