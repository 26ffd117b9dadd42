/**
 * @module Exact decimal money: cost_usd travels as a decimal string and is summed with bigint
 * arithmetic, never binary floats (DECISIONS §3). A value is a bigint scaled by 10^scale.
 */

export interface Decimal {
  readonly units: bigint;
  readonly scale: number;
}

const DECIMAL_RE = /^(-)?(\d+)(?:\.(\d+))?$/;

export function isDecimalString(text: string): boolean {
  return DECIMAL_RE.test(text);
}

/**
 * What a stored cost may be, as a regular expression both engines apply (PostgreSQL as a `~` pattern):
 * a number's text, signed, with a fraction and an exponent of up to 4 digits, spaces around it.
 */
export const COST_TEXT_PATTERN = String.raw`^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]{1,4})?\s*$`;
const COST_TEXT_RE = new RegExp(COST_TEXT_PATTERN);

/**
 * A stored `cost_usd` as SQL hands it over (a decimal string, or a JSON number read as a number or its
 * text) as an exact decimal; null when it holds no money a sum can take: null, empty, or no finite number
 * (`"n/a"`, an object, `NaN`: another tool's rows, a hand edit), which sums leave out instead of failing.
 */
export function readCost(value: unknown): Decimal | null {
  if (typeof value === 'number') return Number.isFinite(value) ? parseDecimal(value) : null;
  if (typeof value === 'bigint') return { units: value, scale: 0 };
  if (typeof value !== 'string') return null;
  if (isDecimalString(value)) return parseDecimal(value);
  if (!COST_TEXT_RE.test(value)) return null;
  // A JSON number reaches SQL as REAL text like '1.0e-07'; its shortest decimal form is what was meant.
  const n = Number(value);
  return Number.isFinite(n) ? parseDecimal(n) : null;
}

/** Parses `"12.340"`; throws on anything that is not a plain decimal (no exponent, no spaces). */
export function parseDecimal(text: string | number): Decimal {
  const source = typeof text === 'number' ? numberToPlain(text) : text.trim();
  const m = DECIMAL_RE.exec(source);
  if (!m) throw new RangeError(`not a decimal number: ${JSON.stringify(text)}`);
  const frac = m[3] ?? '';
  const units = BigInt(`${m[2]}${frac}`);
  return { units: m[1] ? -units : units, scale: frac.length };
}

export const ZERO: Decimal = { units: 0n, scale: 0 };

export function add(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  return { units: rescale(a, scale) + rescale(b, scale), scale };
}

export function sub(a: Decimal, b: Decimal): Decimal {
  return add(a, { units: -b.units, scale: b.scale });
}

export function mul(a: Decimal, b: Decimal): Decimal {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

/** a / b rounded half-up to `scale` digits. */
export function div(a: Decimal, b: Decimal, scale = 12): Decimal {
  if (b.units === 0n) throw new RangeError('division by zero');
  const num = a.units * pow10(scale + b.scale);
  const den = b.units * pow10(a.scale);
  const q = num / den;
  const r = num % den;
  const neg = num < 0n !== den < 0n;
  const roundUp = (r < 0n ? -r : r) * 2n >= (den < 0n ? -den : den);
  return { units: roundUp ? q + (neg ? -1n : 1n) : q, scale };
}

export function compare(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const scale = Math.max(a.scale, b.scale);
  const x = rescale(a, scale);
  const y = rescale(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function isPositive(a: Decimal): boolean {
  return a.units > 0n;
}

/** Sum of decimal strings, exact. */
export function sumDecimals(values: Iterable<string | Decimal>): Decimal {
  let total = ZERO;
  for (const v of values) total = add(total, typeof v === 'string' ? parseDecimal(v) : v);
  return total;
}

/**
 * Canonical text: at least `minScale` fraction digits (6 by default, so sums read `1.000000`),
 * more only when needed, trailing zeros beyond that trimmed.
 */
export function formatDecimal(d: Decimal, minScale = 6): string {
  const neg = d.units < 0n;
  let digits = (neg ? -d.units : d.units).toString().padStart(d.scale + 1, '0');
  let scale = d.scale;
  while (scale > minScale && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    scale -= 1;
  }
  if (scale < minScale) {
    digits += '0'.repeat(minScale - scale);
    scale = minScale;
  }
  const int = digits.slice(0, digits.length - scale) || '0';
  const frac = digits.slice(digits.length - scale);
  const sign = neg && /[1-9]/.test(digits) ? '-' : '';
  return frac ? `${sign}${int}.${frac}` : `${sign}${int}`;
}

/** JSON-number view for metric export and analytics responses; the only float conversion. */
export function toNumber(d: Decimal): number {
  return Number(formatDecimal(d, 0));
}

// --- internal ---

function rescale(d: Decimal, scale: number): bigint {
  return scale === d.scale ? d.units : d.units * pow10(scale - d.scale);
}

/** 10^n, the first few kept (money is summed at a dozen or so digits; each power was a new bigint). */
function pow10(n: number): bigint {
  return n >= 0 && n < POWERS_OF_TEN.length ? POWERS_OF_TEN[n] : 10n ** BigInt(n);
}

const POWERS_OF_TEN: readonly bigint[] = Array.from({ length: 40 }, (_, i) => 10n ** BigInt(i));

function numberToPlain(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite number: ${n}`);
  // The shortest round-trip text (String) is what the author meant; toFixed would expose binary noise.
  return expandExponent(String(n));
}

/** `1.5e-7` → `0.00000015`, `2e+21` → `2000000000000000000000`, exactly (digit shifting, no arithmetic). */
function expandExponent(text: string): string {
  const m = /^(-)?(\d+)(?:\.(\d+))?e([+-]?\d+)$/i.exec(text);
  if (!m) return text;
  const digits = `${m[2]}${m[3] ?? ''}`;
  const point = m[2].length + Number(m[4]);
  const body =
    point <= 0
      ? `0.${'0'.repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + '0'.repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return `${m[1] ?? ''}${body}`;
}
