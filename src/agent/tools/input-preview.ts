/**
 * @module The copy of a tool call's input that its bus events (`tool.called`, `tool.confirmation_requested`)
 * and its tool_calls row carry: the input as the model sent it, except that a string longer than 64 KiB
 * (a large `write_file` content) keeps its first 64 KiB and a note of its full length, and the paths of the
 * cut strings with their lengths are listed. The input is held whole where spec 2 needs it: the assistant
 * message (the model's history, `GET …/messages`, snapshots) and the live stream's `tool.use_input_delta`,
 * `tool.use_end` and `message.complete`; storing it three more times cost 60 MB of store for a 20 MB write.
 */

/** Characters (UTF-16 code units) of a string kept in a preview. */
export const PREVIEW_STRING_CHARS = 64 * 1024;

export interface InputPreview {
  input: Record<string, unknown>;
  /** The cut strings by path (`content`, `edits.0.text`) with their full length in characters. */
  truncated?: Record<string, number>;
}

/** The input itself when no string in it is over the cap (no copy), else a copy with those strings cut. */
export function previewInput(input: Record<string, unknown>): InputPreview {
  const truncated: Record<string, number> = {};
  const out = cut(input, '', truncated) as Record<string, unknown>;
  return out === input ? { input } : { input: out, truncated };
}

// --- internal ---

function cut(value: unknown, path: string, truncated: Record<string, number>): unknown {
  if (typeof value === 'string') {
    if (value.length <= PREVIEW_STRING_CHARS) return value;
    truncated[path] = value.length;
    // never split a surrogate pair
    const end = isHighSurrogate(value.charCodeAt(PREVIEW_STRING_CHARS - 1))
      ? PREVIEW_STRING_CHARS - 1
      : PREVIEW_STRING_CHARS;
    return `${value.slice(0, end)}… [cut here: ${value.length} characters in all]`;
  }
  if (value === null || typeof value !== 'object') return value;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  let copy: Record<string, unknown> | unknown[] | undefined;
  for (const [key, v] of entries) {
    const next = cut(v, path === '' ? key : `${path}.${key}`, truncated);
    if (next === v) continue;
    copy ??= Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) };
    (copy as Record<string, unknown>)[key] = next;
  }
  return copy ?? value;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
