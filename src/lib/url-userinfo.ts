/**
 * @module A URL given by the user, fit to show in a sentence on stderr or a log line: a `user:password@`
 * must reach neither (STYLE rule 5), even in a value that does not parse as a URL.
 */

/** The value with everything before its last `@` (after a `scheme://`) shown as `***`. */
export function withoutUserinfo(value: string): string {
  return value.replace(
    /^([^@]*?\/\/)?[\s\S]*@/,
    (_match, scheme: string | undefined) => `${scheme ?? ''}***@`,
  );
}
