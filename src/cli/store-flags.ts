/**
 * @module The `--database-url` flag every store command takes beside `--db-path` (DECISIONS §2 paths):
 * a postgres:// URL selects PostgreSQL for that run, like SVC_DATABASE_URL. Also the check that a file
 * argument is not empty.
 */
import type { StoreFlags } from '../config/paths.ts';
import { SvcError } from '../lib/errors.ts';

export const databaseUrlArg = {
  'database-url': {
    type: 'string',
    description:
      'PostgreSQL store, postgres://user:password@host:5432/db (default SVC_DATABASE_URL, which keeps the password out of ps)',
  },
} as const;

/** The store flags of a command's parsed args. */
export function storeFlagsOf(args: { 'db-path'?: string; 'database-url'?: string }): StoreFlags {
  return { dbPath: args['db-path'], databaseUrl: args['database-url'] };
}

/**
 * A file argument left empty (an unset shell variable) is a usage error, never the current folder. With
 * `stdio`, "-" (standard output or input to most tools) is one too, for a command that needs a real file:
 * never a file named "-" (./- names one).
 */
export function requireFilePath(
  value: string,
  name: string,
  hint = '',
  stdio?: 'standard output' | 'standard input',
): string {
  if (value.trim() === '')
    throw new SvcError('usage_error', { message: `${name} needs a file path${hint}.` });
  if (stdio !== undefined && value === '-')
    throw new SvcError('usage_error', {
      message: `${name} is a file, not ${stdio} ("-"); name the file (./- for a file called -).`,
    });
  return value;
}
