/**
 * @module write_file: creates or overwrites a workspace file with the given text, creating missing parent
 * directories inside the workspace. Needs the user's confirmation.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';
import { writeNoFollow } from './file-io.ts';
import { fail, fsFailure, isFailure, parseInput, toolInput } from './result.ts';
import type { ToolContext, ToolResult, WorkspaceTool } from './tool.ts';
import { resolveWorkspacePath } from './workspace-path.ts';

const InputSchema = toolInput({
  path: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty')),
  content: v.string('must be a string'),
});

export const writeFileTool: WorkspaceTool = {
  name: 'write_file',
  description:
    'Create or overwrite a file in the workspace with the given content; missing parent directories are created.',
  input_schema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path, relative to the workspace root.' },
      content: { type: 'string', description: 'The complete new content of the file.' },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  needsConfirmation: true,
  readOnly: false,
  run: runWriteFile,
  check: async (input, ctx) => {
    const prepared = await prepare(input, ctx);
    return isFailure(prepared) ? prepared : null;
  },
};

/** The input and the checked target, or the failure met before anything is written. */
async function prepare(input: unknown, ctx: ToolContext) {
  const parsed = parseInput(InputSchema, input);
  if (!parsed.ok) return parsed;
  const first = await resolveWorkspacePath(ctx.workspace, parsed.value.path);
  if (isFailure(first)) return first;
  if (first.rel === '.')
    return fail('invalid_input', 'input field `path`: names the workspace directory itself');
  return { ...parsed.value, first };
}

async function runWriteFile(input: unknown, ctx: ToolContext): Promise<ToolResult> {
  const prepared = await prepare(input, ctx);
  if (isFailure(prepared)) return prepared;
  const { path: wanted, content, first } = prepared;
  try {
    if (!first.exists) await mkdir(path.dirname(first.real), { recursive: true });
    // Checked again after mkdir, right before the open: the real path of the parent must still be inside.
    const target = await resolveWorkspacePath(ctx.workspace, wanted);
    if (isFailure(target)) return target;
    await writeNoFollow(target.real, content);
    const bytes = Buffer.byteLength(content);
    return { ok: true, output: `${first.exists ? 'overwrote' : 'created'} ${target.rel} (${bytes} bytes)` };
  } catch (err) {
    return fsFailure(err, first.rel);
  }
}
