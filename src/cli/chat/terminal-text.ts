/**
 * @module Text from the server made safe for a terminal. What `svc chat` prints comes from the model, the
 * workspace and the model's tool inputs; a control character in it would be acted on by the terminal (an
 * escape sequence that moves the cursor, rewrites or hides a line, sets the title or the clipboard), so a
 * confirmation question could be made to read as another. Each such character is shown as a visible sign
 * instead: C0 controls but tab and newline as their Control Pictures (ESC as ␛, a lone CR as ␍), DEL as ␡,
 * and the C1 controls and the bidirectional overrides and isolates (text that displays reversed) as U+FFFD.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters it replaces
const UNSAFE = /\r\n|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_ANYWHERE = new RegExp(UNSAFE.source);

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => {
    if (c === '\r\n') return '\n';
    const code = c.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    return code === 0x7f ? '\u2421' : '\ufffd';
  });
}

/**
 * One line for stderr: terminalSafe, and a newline or tab (which terminalSafe keeps) as its sign too, so
 * an error sentence quoting what the user gave (a flag value, a file's bytes) stays one line and moves
 * nothing on the terminal.
 */
export function terminalLine(text: string): string {
  return terminalSafe(text).replace(/[\n\t]/g, (c) => (c === '\n' ? '\u2424' : '\u2409'));
}

/** Whether a value shown bare (unquoted) could be misread: space, a quote or a character terminalSafe changes. */
export function needsQuotes(text: string): boolean {
  return /[\s"\\]/.test(text) || UNSAFE_ANYWHERE.test(text);
}
