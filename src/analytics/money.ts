/**
 * @module Exact money in analytics answers. Spec 3 emits sums as JSON numbers; the objects the queries
 * return hold them as JS numbers (the dashboard, the tables and the tests compute with them), which keep
 * about 16 significant digits, while a decimal sum can have more (0.092962551233532016). Each money field
 * is registered here with its exact decimal text, and `stringifyAnswer` writes that text as the JSON
 * number, so a client that reads numbers as decimals gets the sum of the stored costs to the last digit,
 * and one that reads doubles gets the same double as before.
 */
import { type Decimal, formatDecimal } from '../lib/decimal.ts';

const EXACT = new WeakMap<object, Record<string, string>>();

/** `JSON.rawJSON` (Node 21+; not yet in TypeScript's lib). */
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

/**
 * Records the exact text of `fields` (already set on `row` as numbers) where the number's own shortest text
 * differs from it (a sum with more digits than a double holds); returns `row`. Most sums are written
 * exactly by the number itself, and an answer with nothing recorded is written by plain JSON.stringify.
 */
export function withExactMoney<T extends object>(row: T, fields: Readonly<Record<string, Decimal>>): T {
  let texts: Record<string, string> | undefined;
  for (const [key, value] of Object.entries(fields)) {
    const text = formatDecimal(value, 0);
    if (String((row as Record<string, unknown>)[key]) === text) continue;
    texts ??= { ...EXACT.get(row) };
    texts[key] = text;
  }
  if (texts) EXACT.set(row, texts);
  return row;
}

/** The exact decimal text of `row[key]`, when it is a registered money field still holding its value. */
export function exactMoneyText(row: object, key: string): string | undefined {
  const text = EXACT.get(row)?.[key];
  const value = (row as Record<string, unknown>)[key];
  return text !== undefined && typeof value === 'number' && Number(text) === value ? text : undefined;
}

/**
 * JSON text of an answer with every registered money field written exactly. A replacer costs every value
 * of the answer a call (+25 ms on 21,000 session rows), so it runs only when a registered row is in it.
 */
export function stringifyAnswer(value: unknown, space?: number): string {
  if (!holdsExactMoney(value, MAX_ANSWER_DEPTH)) return JSON.stringify(value, undefined, space);
  return JSON.stringify(
    value,
    function (this: unknown, key: string, v: unknown) {
      if (typeof v !== 'number' || typeof this !== 'object' || this === null) return v;
      const text = exactMoneyText(this, key);
      return text === undefined ? v : rawJSON(text);
    },
    space,
  );
}

/** Envelope → data → row → nested level (by_key, by_team) → its rows, with room to spare. */
const MAX_ANSWER_DEPTH = 8;

/** Whether `value` or an object or array within `depth` levels of it has a recorded money field. */
function holdsExactMoney(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null || depth < 0) return false;
  if (EXACT.has(value)) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (holdsExactMoney(item, depth - 1)) return true;
    return false;
  }
  for (const key in value) {
    if (holdsExactMoney((value as Record<string, unknown>)[key], depth - 1)) return true;
  }
  return false;
}
