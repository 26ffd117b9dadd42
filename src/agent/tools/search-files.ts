/**
 * @module search_files: lines matching a regular expression, as `file:line: text`. The regex has RE2 semantics
 * (re2js: matching is linear in the text, so no pattern can backtrack catastrophically). Walks like list_files
 * (no .git, node_modules or symlinks), skips binary files and files over 8 MiB, and caps the output at 64 KiB.
 */
import { constants } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { RE2JS } from 're2js';
import * as v from 'valibot';
import { compileWorkspaceMatcher } from '../../routing/glob.ts';
import { NOT_REGULAR, openRegular } from './file-io.ts';
import {
  cutNote,
  fail,
  fsFailure,
  isFailure,
  looksBinary,
  optionalField,
  parseInput,
  toolInput,
} from './result.ts';
import type { ToolContext, ToolResult, WorkspaceTool } from './tool.ts';
import { walk } from './walk.ts';
import { resolveWorkspacePath } from './workspace-path.ts';

export const SEARCH_CAP_BYTES = 64 * 1024;
export const SEARCH_MAX_FILE_BYTES = 8 * 1024 * 1024;
const MAX_LINE_CHARS = 500;

const InputSchema = toolInput({
  pattern: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty')),
  path: optionalField(v.string('must be a string')),
  glob: optionalField(v.string('must be a string')),
});

export const searchFilesTool: WorkspaceTool = {
  name: 'search_files',
  description:
    'Search file contents for a regular expression (RE2 syntax, matched per line). Optional path limits the ' +
    'search to a directory or file, glob to matching file names (e.g. "*.ts", "*.{ts,tsx}", "src/**/*.md"). ' +
    'Prints file:line: text.',
  input_schema: {
    type: 'object',
    properties: {
      pattern: { type: 'string', description: 'Regular expression (RE2 syntax).' },
      path: {
        type: 'string',
        description: 'Directory or file to search, relative to the workspace (default ".").',
      },
      glob: {
        type: 'string',
        description: 'Only files matching this glob; without "/" it matches the file name at any depth.',
      },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  needsConfirmation: false,
  readOnly: true,
  run: runSearchFiles,
};

async function runSearchFiles(input: unknown, ctx: ToolContext): Promise<ToolResult> {
  const parsed = parseInput(InputSchema, input);
  if (!parsed.ok) return parsed;
  let re: RE2JS;
  try {
    re = RE2JS.compile(parsed.value.pattern);
  } catch (err) {
    return fail(
      'invalid_input',
      `input field \`pattern\`: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const start = await resolveWorkspacePath(ctx.workspace, parsed.value.path || '.');
  if (isFailure(start)) return start;
  const keep = globFilter(parsed.value.glob);
  const out = { lines: [] as string[], bytes: 0, skippedLarge: 0 };
  try {
    const found = await stat(start.real);
    const isDir = found.isDirectory();
    if (!isDir && !found.isFile()) return fsFailure({ code: NOT_REGULAR }, start.rel);
    const files = isDir ? filesBelow(start.real, ctx.signal) : single(start.real);
    for await (const file of files) {
      if (isDir && !keep(path.relative(start.real, file))) continue;
      const full = await searchFile(file, path.relative(start.root, file), re, out);
      if (full) return { ok: true, output: summary(out, true), truncated: true };
    }
  } catch (err) {
    return fsFailure(err, start.rel);
  }
  if (ctx.signal.aborted) return fail('cancelled', 'search_files was cancelled');
  return { ok: true, output: summary(out, false) };
}

// --- internal ---

interface Found {
  lines: string[];
  bytes: number;
  skippedLarge: number;
}

/** Appends the file's matching lines; true once the output cap is reached. */
async function searchFile(abs: string, rel: string, re: RE2JS, out: Found): Promise<boolean> {
  let text: Buffer;
  try {
    const { fh, stat: st } = await openRegular(abs, constants.O_RDONLY);
    try {
      if (st.size > SEARCH_MAX_FILE_BYTES) {
        out.skippedLarge += 1;
        return false;
      }
      text = await fh.readFile();
    } finally {
      await fh.close();
    }
  } catch {
    return false; // vanished, unreadable or swapped for a symlink or a pipe since the walk: not searched
  }
  if (looksBinary(text)) return false;
  // as grep: the newline that ends the last line starts no line of its own, and an empty file has none
  const body = text.toString('utf8');
  const lines = body === '' ? [] : body.replace(/\n$/, '').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, '');
    if (!re.test(line)) continue;
    const shown = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
    const entry = `${rel}:${i + 1}: ${shown}`;
    out.bytes += Buffer.byteLength(entry) + 1;
    if (out.bytes > SEARCH_CAP_BYTES) return true;
    out.lines.push(entry);
  }
  return false;
}

function summary(out: Found, cut: boolean): string {
  let text = out.lines.length === 0 ? 'no matches' : out.lines.join('\n');
  if (out.skippedLarge > 0) text += `\n[${out.skippedLarge} file(s) over 8 MiB not searched]`;
  if (cut) text += cutNote('search output', SEARCH_CAP_BYTES, 'narrow the pattern, path or glob');
  return text;
}

async function* filesBelow(dir: string, signal: AbortSignal): AsyncGenerator<string> {
  for await (const entry of walk(dir, true, signal)) if (entry.kind === 'file') yield entry.abs;
}

async function* single(file: string): AsyncGenerator<string> {
  yield file;
}

/**
 * A glob without "/" matches the file name at any depth; with "/" the path below the search root. `{a,b}`
 * alternatives (ripgrep's and the models' habit: "*.{ts,tsx}") are expanded first, each read by that rule.
 */
function globFilter(glob: string | undefined): (rel: string) => boolean {
  if (!glob) return () => true;
  const tests = expandBraces(glob).map((alt) => {
    const match = compileWorkspaceMatcher(alt);
    return alt.includes('/') ? match : (rel: string) => match(path.basename(rel));
  });
  return (rel) => tests.some((test) => test(rel));
}

/** Most alternatives a glob's braces may expand to (a bound on the work per file). */
const MAX_GLOB_ALTERNATIVES = 256;

/** `x{a,b{c,d}}y` → xay, xbcy, xbdy (`{a}` is `a`); an unbalanced brace is literal. */
function expandBraces(glob: string): string[] {
  const open = glob.indexOf('{');
  if (open < 0) return [glob];
  let depth = 0;
  const commas: number[] = [];
  for (let i = open; i < glob.length; i++) {
    if (glob[i] === '{') depth++;
    else if (glob[i] === '}' && --depth === 0) {
      const inner = glob.slice(open + 1, i);
      const parts = splitAt(
        inner,
        commas.map((c) => c - open - 1),
      );
      const rest = expandBraces(glob.slice(i + 1));
      const out: string[] = [];
      for (const part of parts.flatMap(expandBraces))
        for (const tail of rest)
          if (out.length < MAX_GLOB_ALTERNATIVES) out.push(glob.slice(0, open) + part + tail);
      return out;
    } else if (glob[i] === ',' && depth === 1) commas.push(i);
  }
  return [glob]; // unbalanced: literal
}

function splitAt(text: string, at: number[]): string[] {
  const parts: string[] = [];
  let from = 0;
  for (const i of at) {
    parts.push(text.slice(from, i));
    from = i + 1;
  }
  parts.push(text.slice(from));
  return parts;
}
