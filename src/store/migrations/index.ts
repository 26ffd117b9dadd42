import type { Kysely } from 'kysely';
import * as m0001 from './0001-initial.ts';
import * as m0002 from './0002-forget-salt.ts';
import * as m0003 from './0003-session-sticky-model.ts';
import * as m0004 from './0004-analytics-read-paths.ts';
import * as m0005 from './0005-lean-event-indexes.ts';
import * as m0006 from './0006-time-leading-type-index.ts';
import * as m0007 from './0007-session-answers-survive-restart.ts';
import * as m0008 from './0008-session-workspace-root.ts';

export interface Migration {
  /** The schema version after this migration; equals its position (1-based). */
  readonly version: number;
  readonly name: string;
  up(db: Kysely<any>): Promise<void>;
}

/** Frozen, in order. Append only; never edit a shipped migration. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: '0001-initial', up: m0001.up },
  { version: 2, name: '0002-forget-salt', up: m0002.up },
  { version: 3, name: '0003-session-sticky-model', up: m0003.up },
  { version: 4, name: '0004-analytics-read-paths', up: m0004.up },
  { version: 5, name: '0005-lean-event-indexes', up: m0005.up },
  { version: 6, name: '0006-time-leading-type-index', up: m0006.up },
  { version: 7, name: '0007-session-answers-survive-restart', up: m0007.up },
  { version: 8, name: '0008-session-workspace-root', up: m0008.up },
];
