/**
 * @module Helpers every workspace tool shares: failure results in DECISIONS §3's tool classes, valibot input
 * validation that names the offending field, output caps with a note to the model, and fs error mapping.
 */
import * as v from 'valibot';
import type { ToolErrorClass } from '../../events/catalog.ts';
import type { ToolFailure } from './tool.ts';

export type { ToolFailure };

export function fail(error_class: ToolErrorClass, message: string): ToolFailure {
  return { ok: false, error_class, message };
}

export function isFailure(value: unknown): value is ToolFailure {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;
}

/**
 * A tool's input schema: a closed object, as the JSON schema the model sees says (`additionalProperties:
 * false`), so a misspelt optional field (`recursiv`) is refused naming it instead of silently ignored.
 */
export function toolInput<E extends v.ObjectEntries>(entries: E) {
  const fields = Object.keys(entries).join(', ');
  return v.strictObject(entries, (issue) => {
    if (issue.expected === 'never') return `is not a field of this tool (its fields: ${fields})`;
    if (issue.expected === 'Object') return 'the tool input must be a JSON object';
    return 'is required';
  });
}

/** An optional field: absent, or null (as models in strict JSON modes send an unset optional field). */
export const optionalField = <S extends v.GenericSchema>(schema: S) =>
  v.pipe(
    v.nullish(schema),
    v.transform((value) => value ?? undefined),
  );

/** Validates a tool's input; a failure is `invalid_input` naming the first bad field. */
export function parseInput<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
): { ok: true; value: v.InferOutput<S> } | ToolFailure {
  const parsed = v.safeParse(schema, input ?? {});
  if (parsed.success) return { ok: true, value: parsed.output };
  const issue = parsed.issues[0];
  const field = v.getDotPath(issue);
  return fail('invalid_input', field ? `input field \`${field}\`: ${issue.message}` : issue.message);
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes (never inside a character). */
export function capUtf8(text: string, maxBytes: number): { text: string; truncated: boolean } {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return { text, truncated: false };
  return { text: decodeCut(buf.subarray(0, maxBytes)), truncated: true };
}

/** Decodes bytes cut at an arbitrary offset, dropping a trailing partial character. */
export function decodeCut(bytes: Buffer): string {
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes).replace(/\uFFFD$/, '');
}

/** The note appended to any output that was cut, so the model knows it did not see everything. */
export function cutNote(what: string, maxBytes: number, hint: string): string {
  return `\n[${what} cut at ${formatBytes(maxBytes)}; ${hint}]`;
}

export function formatBytes(n: number): string {
  return n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`;
}

/** Maps a Node fs error to a tool failure about `rel` (the path as the model should see it). */
export function fsFailure(err: unknown, rel: string): ToolFailure {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return fail('not_found', `${rel} does not exist`);
    case 'ENOTDIR':
    case 'EEXIST': // mkdir -p through a file
      return fail('not_found', `${rel}: a part of the path is not a directory`);
    case 'EISDIR':
      return fail('invalid_input', `${rel} is a directory`);
    case 'EACCES':
    case 'EPERM':
      return fail('permission_denied', `${rel}: permission denied`);
    case 'ENOTREG': // file-io.ts: a FIFO, socket or device
    case 'ENXIO': // a FIFO opened for writing with no reader
      return fail(
        'invalid_input',
        `${rel} is not a regular file (a named pipe, socket or device); the tools read and write regular files only`,
      );
    case 'ELOOP':
      // The checked path is a real path, so a symlink here was swapped in after the check.
      return fail('outside_workspace', `${rel} is (or became) a symlink; refused`);
    default:
      return fail('execution_error', `${rel}: ${code ?? (err instanceof Error ? err.message : String(err))}`);
  }
}

/** A NUL byte in the first 8 KiB marks a file as binary (as git and grep decide). */
export function looksBinary(head: Uint8Array): boolean {
  return head.subarray(0, 8192).includes(0);
}
