/**
 * @module edit_file: replaces an exact string in a workspace file. old_string must occur exactly once unless
 * replace_all is set, so an ambiguous edit is refused (invalid_input with the count) instead of guessed.
 * Needs the user's confirmation.
 */
import * as v from 'valibot';
import { readNoFollow, writeNoFollow } from './file-io.ts';
import { fail, fsFailure, isFailure, optionalField, parseInput, toolInput } from './result.ts';
import type { ToolContext, ToolResult, WorkspaceTool } from './tool.ts';
import { resolveWorkspacePath } from './workspace-path.ts';

const InputSchema = toolInput({
  path: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty')),
  old_string: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty')),
  new_string: v.string('must be a string'),
  replace_all: optionalField(v.boolean('must be a boolean')),
});

export const editFileTool: WorkspaceTool = {
  name: 'edit_file',
  description:
    'Replace old_string with new_string in a workspace file. old_string must match the file text exactly and ' +
    'occur exactly once, unless replace_all is true (then every occurrence is replaced).',
  input_schema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path, relative to the workspace root.' },
      old_string: { type: 'string', description: 'The exact text to replace (whitespace included).' },
      new_string: { type: 'string', description: 'The replacement text.' },
      replace_all: { type: 'boolean', description: 'Replace every occurrence (default false).' },
    },
    required: ['path', 'old_string', 'new_string'],
    additionalProperties: false,
  },
  needsConfirmation: true,
  readOnly: false,
  run: runEditFile,
  check: async (input, ctx) => {
    const prepared = await prepare(input, ctx);
    return isFailure(prepared) ? prepared : null;
  },
};

/** The edit to make (the file read, old_string found), or the failure met before anything is written. */
async function prepare(input: unknown, ctx: ToolContext) {
  const parsed = parseInput(InputSchema, input);
  if (!parsed.ok) return parsed;
  const { old_string: oldText, new_string: newText, replace_all: all = false } = parsed.value;
  if (oldText === newText)
    return fail('invalid_input', 'input field `new_string`: is the same as old_string');
  const target = await resolveWorkspacePath(ctx.workspace, parsed.value.path);
  if (isFailure(target)) return target;
  try {
    // bytes, not decoded text: whatever is not UTF-8 (a Latin-1 file, a binary part) is kept byte for byte
    const bytes = await readNoFollow(target.real);
    const at = occurrences(bytes, Buffer.from(oldText, 'utf8'));
    const count = at.length;
    if (count === 0) return fail('invalid_input', `old_string not found in ${target.rel}`);
    if (count > 1 && !all) {
      return fail(
        'invalid_input',
        `old_string occurs ${count} times in ${target.rel}; add surrounding text to make it unique, or set replace_all`,
      );
    }
    return { path: parsed.value.path, oldText, newText, target, bytes, at };
  } catch (err) {
    return fsFailure(err, target.rel);
  }
}

async function runEditFile(input: unknown, ctx: ToolContext): Promise<ToolResult> {
  const prepared = await prepare(input, ctx);
  if (isFailure(prepared)) return prepared;
  const { oldText, newText, target, bytes, at } = prepared;
  try {
    // Checked again right before the write: the file may have been swapped since the read.
    const again = await resolveWorkspacePath(ctx.workspace, prepared.path);
    if (isFailure(again)) return again;
    await writeNoFollow(again.real, replaceAt(bytes, at, Buffer.byteLength(oldText), Buffer.from(newText)));
    const count = at.length;
    return { ok: true, output: `replaced ${count} occurrence${count === 1 ? '' : 's'} in ${target.rel}` };
  } catch (err) {
    return fsFailure(err, target.rel);
  }
}

// --- internal ---

/** Offsets of the non-overlapping occurrences of `needle`, left to right (as String.split finds them). */
function occurrences(haystack: Buffer, needle: Buffer): number[] {
  const at: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length))
    at.push(i);
  return at;
}

function replaceAt(bytes: Buffer, at: readonly number[], oldLength: number, replacement: Buffer): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (const i of at) {
    parts.push(bytes.subarray(from, i), replacement);
    from = i + oldLength;
  }
  parts.push(bytes.subarray(from));
  return Buffer.concat(parts);
}
