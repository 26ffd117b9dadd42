/**
 * @module Forget pseudonyms: `redacted_` + 12 hex of SHA-256 over the store's secret salt and the id
 * (spec 3 §forget). The salt lives in store_meta (seeded by migration 0002) and travels with backups,
 * so a restored store maps an id to the same pseudonym, and nobody without the store can confirm a
 * guessed id by hashing it.
 */
import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { sha256Hex } from '../../lib/hash.ts';
import { ADVISORY_LOCKS, type EngineName } from '../../store/dialect.ts';
import type { Database } from '../../store/schema.ts';

export const PSEUDONYM_PREFIX = 'redacted_';
export const FORGET_SALT_KEY = 'forget_salt';

/** The pseudonym of `userId` under `salt`; the id passed the shape guard, so ':' cannot occur in it. */
export function pseudonymFor(salt: string, userId: string): string {
  return `${PSEUDONYM_PREFIX}${sha256Hex(`${salt}:${userId}`).slice(0, 12)}`;
}

/**
 * The store's forget salt. A store whose salt row went missing gets a new one (pseudonyms made before
 * then will no longer match); call inside a write transaction so concurrent callers agree.
 */
export async function loadForgetSalt(db: Kysely<Database>): Promise<string> {
  const existing = await readForgetSalt(db);
  if (existing !== undefined) return existing;
  await db
    .insertInto('store_meta')
    .values({ key: FORGET_SALT_KEY, value: randomBytes(32).toString('hex') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const created = await readForgetSalt(db);
  if (created === undefined) throw new Error('the forget salt could not be stored');
  return created;
}

/** The salt, or undefined when the store has none (read-only use: never writes). */
export async function readForgetSalt(db: Kysely<Database>): Promise<string | undefined> {
  const row = await db
    .selectFrom('store_meta')
    .select('value')
    .where('key', '=', FORGET_SALT_KEY)
    .executeTakeFirst();
  return row?.value;
}

/**
 * Serialises a forget against an export's audit record: call first in the write transaction that
 * decides who the record names and stores it, and in the forget's. SQLite's BEGIN IMMEDIATE already
 * does; PostgreSQL takes a transaction-scoped advisory lock, so a forget committing between the decision
 * and the insert cannot leave the raw id behind.
 */
export async function lockForget(trx: Kysely<Database>, engine: EngineName): Promise<void> {
  if (engine !== 'postgres') return;
  const [a, b] = ADVISORY_LOCKS.forget;
  await sql`SELECT pg_advisory_xact_lock(${sql.lit(a)}, ${sql.lit(b)})`.execute(trx);
}
