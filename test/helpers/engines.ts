/**
 * One suite, two engines: `describeEachEngine` runs a suite once against a SQLite file and once against
 * the file's PostgreSQL server (useTestPostgres), each test opening fresh stores from `engine.target()`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, type TestContext, test } from 'node:test';
import type { StoreTarget } from '#src/config/paths.ts';
import { ENGINES, type EngineName } from '#src/store/dialect.ts';
import type { TestPostgres } from './postgres.ts';

export interface EngineUnderTest {
  readonly name: EngineName;
  /** A new, empty store of this engine. */
  target(): Promise<StoreTarget>;
  /** True (and the test marked skipped with the reason) when this engine cannot run here. */
  skipped(t: { skip(message?: string): void }): boolean;
  /** node:test's `test`, skipped with the reason where this engine cannot run. */
  test(name: string, fn: (t: TestContext) => Promise<void>): void;
}

export function describeEachEngine(
  title: string,
  postgres: TestPostgres,
  suite: (engine: EngineUnderTest) => void,
): void {
  for (const name of ENGINES) {
    describe(`${title} [${name}]`, () => {
      suite(name === 'sqlite' ? sqliteEngine() : postgresEngine(postgres));
    });
  }
}

/** SQLite files in a temp folder removed after the suite. */
export function sqliteEngine(): EngineUnderTest {
  return withTest(sqliteTargets());
}

export function postgresEngine(postgres: TestPostgres): EngineUnderTest {
  return withTest(postgresTargets(postgres));
}

// --- internal ---

function withTest(engine: Omit<EngineUnderTest, 'test'>): EngineUnderTest {
  return {
    ...engine,
    test: (name, fn) =>
      void test(name, async (t) => {
        if (engine.skipped(t)) return;
        await fn(t);
      }),
  };
}

function sqliteTargets(): Omit<EngineUnderTest, 'test'> {
  let dir: string | undefined;
  let n = 0;
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    name: 'sqlite',
    async target() {
      dir ??= mkdtempSync(join(tmpdir(), 'svc-engine-'));
      return { engine: 'sqlite', path: join(dir, `s${++n}.db`) };
    },
    skipped: () => false,
  };
}

function postgresTargets(postgres: TestPostgres): Omit<EngineUnderTest, 'test'> {
  return {
    name: 'postgres',
    async target() {
      return { engine: 'postgres', url: await postgres.createDatabase() };
    },
    skipped(t) {
      if (postgres.reason === undefined) return false;
      t.skip(postgres.reason);
      return true;
    },
  };
}
