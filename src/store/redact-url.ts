/**
 * @module A PostgreSQL URL fit to show, apart from the driver (postgres.ts) so the commands that only name
 * the database (backup, forget) on a SQLite store do not load pg.
 */

/** The URL without its password, for messages and logs. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}
