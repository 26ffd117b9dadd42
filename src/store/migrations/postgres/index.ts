import type { Kysely } from 'kysely';
import * as m0001 from './0001-initial.ts';
import * as m0002 from './0002-gateway-keys.ts';
import * as m0003 from './0003-budgets.ts';
import * as m0004 from './0004-session-answers-survive-restart.ts';
import * as m0005 from './0005-session-workspace-root.ts';

export interface PostgresMigration {
  /** The schema version after this migration; equals its position (1-based). */
  readonly version: number;
  readonly name: string;
  up(db: Kysely<any>): Promise<void>;
}

/** store_meta key of the PostgreSQL schema version; each migration writes its own number there. */
export const POSTGRES_VERSION_KEY = 'schema_version';

/**
 * Frozen, in order; PostgreSQL's own sequence (SQLite's is ../index.ts). Append only. A SQLite migration
 * that changes tables gets its PostgreSQL counterpart here (test/unit/store/engines-carry-the-same-tables).
 */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  { version: 1, name: '0001-initial', up: m0001.up },
  { version: 2, name: '0002-gateway-keys', up: m0002.up },
  { version: 3, name: '0003-budgets', up: m0003.up },
  { version: 4, name: '0004-session-answers-survive-restart', up: m0004.up },
  { version: 5, name: '0005-session-workspace-root', up: m0005.up },
];
