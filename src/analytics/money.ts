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

/** Records the exact text of `fields` (already set on `row` as numbers); returns `row`. */
export function withExactMoney<T extends object>(row: T, fields: Readonly<Record<string, Decimal>>): T {
  const texts: Record<string, string> = { ...EXACT.get(row) };
  for (const [key, value] of Object.entries(fields)) texts[key] = formatDecimal(value, 0);
  EXACT.set(row, texts);
  return row;
}

/** The exact decimal text of `row[key]`, when it is a registered money field still holding its value. */
export function exactMoneyText(row: object, key: string): string | undefined {
  const text = EXACT.get(row)?.[key];
  const value = (row as Record<string, unknown>)[key];
  return text !== undefined && typeof value === 'number' && Number(text) === value ? text : undefined;
}

/** JSON text of an answer with every registered money field written exactly. */
export function stringifyAnswer(value: unknown, space?: number): string {
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
