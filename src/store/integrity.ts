/**
 * @module SQLite's own consistency checks of a store file, as one sentence: restore runs them on the
 * backup and its staged copy, backup on the store it copies, forget before it rewrites anything (a
 * damaged index can hide rows from the rewrite, and VACUUM then keeps the old bytes).
 */
import { sql } from 'kysely';
import { errorMessage, SvcError } from '../lib/errors.ts';
import type { Store } from './open.ts';
import { DAMAGED } from './sqlite-errors.ts';

/** The check's complaints (none when it answers `ok`); a check that cannot even run is one complaint. */
export async function integrityProblems(
  store: Store,
  check: 'integrity_check' | 'quick_check' = 'integrity_check',
): Promise<string[]> {
  if (store.engine !== 'sqlite') return [];
  try {
    const r = await sql<Record<string, string>>`PRAGMA ${sql.raw(check)}`.execute(store.kysely);
    const lines = r.rows.map((row) => String(Object.values(row)[0]));
    return lines.length === 1 && lines[0] === 'ok' ? [] : lines;
  } catch (err) {
    return [errorMessage(err)];
  }
}

/**
 * The complaints on one line for a sentence: SQLite's rows can span several lines (`*** in database
 * main ***` then one per problem); headers are dropped, problems joined with `; `, at most MAX_CHARS.
 */
export function describeProblems(problems: readonly string[]): string {
  const lines = problems
    .flatMap((p) => p.split(/\r?\n/))
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^\*\*\* .* \*\*\*$/.test(l));
  let text = '';
  let shown = 0;
  for (const line of lines) {
    const next = text === '' ? line : `${text}; ${line}`;
    if (next.length > MAX_CHARS && shown > 0) break;
    text = next.length > MAX_CHARS ? `${next.slice(0, MAX_CHARS - 1)}…` : next;
    shown += 1;
  }
  if (shown < lines.length) text += `; ${lines.length - shown} more problems`;
  return text === '' ? 'no detail given' : text;
}

/**
 * Refuses (store_error, exit 1) a SQLite store that fails PRAGMA integrity_check; `consequence` says
 * what was not done (`nothing was changed`). A PostgreSQL store is not checked.
 */
export async function assertStoreIntact(store: Store, consequence: string): Promise<void> {
  const problems = await integrityProblems(store);
  if (problems.length === 0) return;
  throw new SvcError('store_error', {
    message: `${DAMAGED[0]}: ${store.path} failed PRAGMA integrity_check (${describeProblems(problems)}), so ${consequence}; ${DAMAGED[1]}.`,
  });
}

// --- internal ---

/** Longest problem text in a sentence. */
const MAX_CHARS = 300;
