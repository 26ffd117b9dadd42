/**
 * @module PostgreSQL refusals that are neither an outage (dialect.ts isStoreUnreachable) nor a fault of
 * svc's, but of how the database was set up for it: a read-only server or role (a standby, a read replica,
 * default_transaction_read_only), a statement_timeout shorter than a statement needs, a missing privilege,
 * a full disk. The command line says what to change instead of 'unexpected error' (a read-only server is
 * also what a failover looks like for a while, which servers wait out: dialect.ts).
 */
import { errorMessage } from '../lib/errors.ts';

/** What the operator should change, by SQLSTATE; undefined for any other error. */
export function postgresRefusalAdvice(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case '25006':
      return 'the server or role takes no writes (a standby, a read replica, default_transaction_read_only); point SVC_DATABASE_URL (or --database-url) at the primary, with a role that may write';
    case '57014':
      return "a statement_timeout of the role or database (or an operator) cancelled it; raise the timeout for svc's role (ALTER ROLE … SET statement_timeout = 0) and run the command again";
    case '42501':
      return "the role lacks a privilege svc needs; use the role that created svc's tables, or grant this one the same rights on them";
    case '53100':
      return 'the PostgreSQL server is out of disk space; free some and run the command again';
    default:
      return undefined;
  }
}

/** The command line's sentence for such a refusal mid-command; undefined for any other error. */
export function describePostgresRefusal(err: unknown): string | undefined {
  const advice = postgresRefusalAdvice(err);
  return advice === undefined
    ? undefined
    : `The PostgreSQL store refused a statement (${errorMessage(err)}): ${advice}.`;
}
