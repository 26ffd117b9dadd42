/**
 * @module read_file: a file's text, whole or a range of lines (offset is 1-based, limit counts lines). The bytes
 * are passed through unchanged (no line numbers) so the model can quote them to edit_file; the output is capped
 * at 256 KiB with a note. A binary file is reported by size instead of shown.
 */
import { constants, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as v from 'valibot';
import { openRegular } from './file-io.ts';
import {
  cutNote,
  decodeCut,
  fail,
  fsFailure,
  isFailure,
  looksBinary,
  optionalField,
  parseInput,
  toolInput,
} from './result.ts';
import type { ToolContext, ToolResult, WorkspaceTool } from './tool.ts';
import { resolveWorkspacePath } from './workspace-path.ts';

export const READ_CAP_BYTES = 256 * 1024;

const InputSchema = toolInput({
  path: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty')),
  offset: optionalField(v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(1))),
  limit: optionalField(v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(1))),
});

export const readFileTool: WorkspaceTool = {
  name: 'read_file',
  description:
    'Read a text file in the workspace. Optional offset (1-based line) and limit (number of lines) read a range; ' +
    'output over 256 KiB is cut with a note.',
  input_schema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path, relative to the workspace root.' },
      offset: { type: 'integer', minimum: 1, description: 'First line to read (1-based).' },
      limit: { type: 'integer', minimum: 1, description: 'Maximum number of lines to read.' },
    },
    required: ['path'],
    additionalProperties: false,
  },
  needsConfirmation: false,
  readOnly: true,
  run: runReadFile,
};

async function runReadFile(input: unknown, ctx: ToolContext): Promise<ToolResult> {
  const parsed = parseInput(InputSchema, input);
  if (!parsed.ok) return parsed;
  const { path, offset = 1, limit } = parsed.value;
  const target = await resolveWorkspacePath(ctx.workspace, path);
  if (isFailure(target)) return target;
  let opened: { fh: FileHandle; stat: Stats };
  try {
    opened = await openRegular(target.real, constants.O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EISDIR')
      return fail('invalid_input', `${target.rel} is a directory; use list_files`);
    return fsFailure(err, target.rel);
  }
  const { fh, stat } = opened;
  try {
    const read = await readLines(fh, offset, limit, ctx.signal);
    if (read === 'cancelled') return fail('cancelled', `read_file was cancelled while reading ${target.rel}`);
    const { bytes, truncated, binary } = read;
    if (binary)
      return { ok: true, output: `(${target.rel} is a binary file of ${stat.size} bytes; not shown)` };
    let output = decodeCut(bytes);
    if (output === '') output = stat.size === 0 ? '(empty file)' : `(no lines from line ${offset})`;
    if (truncated) output += cutNote('file output', READ_CAP_BYTES, 'read the rest with offset and limit');
    return truncated ? { ok: true, output, truncated } : { ok: true, output };
  } catch (err) {
    return fsFailure(err, target.rel);
  } finally {
    await fh.close();
  }
}

// --- internal ---

/**
 * Streams the file, keeping lines [offset, offset+limit) byte for byte until the cap; stops at the turn's
 * cancel (a far offset in a large file is read through up to it).
 */
async function readLines(
  fh: FileHandle,
  offset: number,
  limit: number | undefined,
  signal: AbortSignal,
): Promise<{ bytes: Buffer; truncated: boolean; binary: boolean } | 'cancelled'> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let line = 1;
  const last = limit === undefined ? Number.POSITIVE_INFINITY : offset + limit - 1;
  let first = true;
  for await (const chunk of fh.createReadStream({ highWaterMark: 64 * 1024, autoClose: false })) {
    if (signal.aborted) return 'cancelled';
    const buf = chunk as Buffer;
    if (first && looksBinary(buf)) return { bytes: Buffer.alloc(0), truncated: false, binary: true };
    first = false;
    let start = 0;
    while (start < buf.length && line <= last) {
      const nl = buf.indexOf(10, start);
      const end = nl === -1 ? buf.length : nl + 1;
      if (line >= offset) {
        kept.push(buf.subarray(start, end));
        keptBytes += end - start;
        if (keptBytes > READ_CAP_BYTES) {
          return { bytes: Buffer.concat(kept).subarray(0, READ_CAP_BYTES), truncated: true, binary: false };
        }
      }
      if (nl === -1) break;
      line += 1;
      start = end;
    }
    if (line > last) break;
  }
  return { bytes: Buffer.concat(kept), truncated: false, binary: false };
}
