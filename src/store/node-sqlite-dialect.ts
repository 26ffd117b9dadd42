/**
 * @module Kysely dialect over node:sqlite's DatabaseSync: adapts it to the small SqliteDatabase
 * interface Kysely's SQLite driver expects (prepare → reader/all/run/iterate), so no native addon
 * (better-sqlite3) is needed (DECISIONS §3).
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  type SqliteStatement,
} from 'kysely';

/**
 * A Kysely dialect whose every query runs on `db`; closing Kysely does not close `db`.
 * Kysely serialises queries on its one connection: never await another query on the same Kysely
 * inside a `.stream()` loop or a `connection().execute()` callback other than through that connection.
 */
export function createNodeSqliteDialect(db: DatabaseSync): SqliteDialect {
  return new NodeSqliteDialect({ database: adaptDatabase(db) }, db);
}

/** The adapter itself, exported for its own tests. */
export function adaptDatabase(db: DatabaseSync): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close() {
      cache.clear();
    },
    prepare(sql: string): SqliteStatement {
      let stmt = cache.get(sql);
      if (!stmt) {
        stmt = adaptStatement(db.prepare(sql));
        if (cache.size > 500) cache.clear();
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}

// --- internal ---

/**
 * Kysely transactions start with BEGIN IMMEDIATE: they take the write lock up front (waiting up to
 * busy_timeout), because a deferred transaction that reads and then writes while another process
 * commits fails at once with SQLITE_BUSY, bypassing the busy handler.
 */
class NodeSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #db: DatabaseSync;
  constructor(config: SqliteDialectConfig, db: DatabaseSync) {
    super(config);
    this.#config = config;
    this.#db = db;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#db);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  readonly #db: DatabaseSync;
  constructor(config: SqliteDialectConfig, db: DatabaseSync) {
    super(config);
    this.#db = db;
  }
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('BEGIN IMMEDIATE'));
  }
  /**
   * SQLite has already rolled back a transaction whose statement or COMMIT failed with SQLITE_FULL (or an
   * I/O error); a ROLLBACK then fails with "no transaction is active", and that error would replace the
   * one that says what happened.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.#db.isTransaction) return;
    await super.rollbackTransaction(connection);
  }
}

function adaptStatement(stmt: StatementSync): SqliteStatement {
  const reader = stmt.columns().length > 0;
  return {
    reader,
    all: (params) => stmt.all(...toParams(params)) as unknown[],
    run: (params) => {
      const r = stmt.run(...toParams(params));
      return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
    },
    iterate: (params) => stmt.iterate(...toParams(params)) as IterableIterator<unknown>,
  };
}

function toParams(params: ReadonlyArray<unknown>): SQLInputValue[] {
  return params.map((p) => {
    if (typeof p === 'boolean') return p ? 1 : 0;
    if (p === undefined) return null;
    if (p instanceof Date) return p.toISOString();
    return p as SQLInputValue;
  });
}
