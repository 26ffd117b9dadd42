import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  add,
  compare,
  div,
  formatDecimal,
  isDecimalString,
  mul,
  parseDecimal,
  sub,
  sumDecimals,
  toNumber,
} from '#src/lib/decimal.ts';

const f = (text: string | number) => formatDecimal(parseDecimal(text));

test('a million 0.000001 sum to exactly 1.000000', () => {
  const values = new Array<string>(1_000_000).fill('0.000001');
  assert.equal(formatDecimal(sumDecimals(values)), '1.000000');
  // what binary floats would have given
  assert.notEqual(
    values.reduce((s, v) => s + Number(v), 0),
    1,
  );
});

test('parseDecimal reads plain decimals and refuses anything else', () => {
  assert.deepEqual(parseDecimal('12.340'), { units: 12340n, scale: 3 });
  assert.deepEqual(parseDecimal('-0.5'), { units: -5n, scale: 1 });
  assert.deepEqual(parseDecimal(' 7 '), { units: 7n, scale: 0 });
  assert.equal(f('123456789012345678901234567890.123456789'), '123456789012345678901234567890.123456789');
  for (const bad of ['', '1e-7', '.5', '1.', '+1', '1,5', 'NaN', '0x10', '1 000', '--1']) {
    assert.throws(() => parseDecimal(bad), RangeError, bad);
    assert.equal(isDecimalString(bad), false, bad);
  }
  assert.throws(() => parseDecimal(Number.NaN), RangeError);
  assert.throws(() => parseDecimal(Number.POSITIVE_INFINITY), RangeError);
});

test('numbers parse as their shortest decimal text, exponents expanded exactly', () => {
  assert.equal(f(0.1), '0.100000');
  assert.equal(f(1e-7), '0.0000001');
  assert.equal(f(1.5e-7), '0.00000015');
  assert.equal(f(1.23456789e-10), '0.000000000123456789');
  assert.equal(f(-2.5e-8), '-0.000000025');
  assert.equal(f(2e21), '2000000000000000000000.000000');
  assert.equal(f(1.5e21), '1500000000000000000000.000000');
  assert.equal(f(42), '42.000000');
});

test('formatDecimal keeps six fraction digits, more only when needed, and no negative zero', () => {
  assert.equal(f('1'), '1.000000');
  assert.equal(f('1.10000000'), '1.100000');
  assert.equal(f('0.0000001'), '0.0000001');
  assert.equal(f('-0.000'), '0.000000');
  assert.equal(f('-1.5'), '-1.500000');
  assert.equal(formatDecimal(parseDecimal('3.14'), 0), '3.14');
  assert.equal(formatDecimal(parseDecimal('3.00'), 0), '3');
  assert.equal(formatDecimal(parseDecimal('0.05'), 0), '0.05');
});

test('add, sub and mul are exact across scales', () => {
  assert.equal(formatDecimal(add(parseDecimal('0.1'), parseDecimal('0.2'))), '0.300000');
  assert.equal(formatDecimal(sub(parseDecimal('1'), parseDecimal('0.000001'))), '0.999999');
  assert.equal(formatDecimal(sub(parseDecimal('0.1'), parseDecimal('0.3'))), '-0.200000');
  // 1,234 tokens at $3 per million tokens
  assert.equal(
    formatDecimal(div(mul(parseDecimal('1234'), parseDecimal('3')), parseDecimal('1000000'))),
    '0.003702',
  );
  assert.equal(formatDecimal(mul(parseDecimal('-0.5'), parseDecimal('0.5'))), '-0.250000');
});

test('div rounds half away from zero at the requested scale and refuses zero', () => {
  assert.equal(formatDecimal(div(parseDecimal('1'), parseDecimal('3'), 6)), '0.333333');
  assert.equal(formatDecimal(div(parseDecimal('2'), parseDecimal('3'), 6)), '0.666667');
  assert.equal(formatDecimal(div(parseDecimal('-2'), parseDecimal('3'), 6)), '-0.666667');
  assert.equal(formatDecimal(div(parseDecimal('0.0000005'), parseDecimal('1'), 6)), '0.000001');
  assert.equal(formatDecimal(div(parseDecimal('-0.0000005'), parseDecimal('1'), 6)), '-0.000001');
  assert.equal(formatDecimal(div(parseDecimal('1'), parseDecimal('-4'), 2), 0), '-0.25');
  assert.equal(formatDecimal(div(parseDecimal('10.5'), parseDecimal('0.25'), 0)), '42.000000');
  assert.throws(() => div(parseDecimal('1'), parseDecimal('0.000')), RangeError);
});

test('compare orders values of different scales and toNumber is the only float view', () => {
  assert.equal(compare(parseDecimal('1.0'), parseDecimal('1')), 0);
  assert.equal(compare(parseDecimal('0.000001'), parseDecimal('0.00001')), -1);
  assert.equal(compare(parseDecimal('-1'), parseDecimal('-2')), 1);
  assert.equal(toNumber(parseDecimal('12.500')), 12.5);
  assert.equal(sumDecimals([]).units, 0n);
  assert.equal(formatDecimal(sumDecimals(['1.5', parseDecimal('2.25'), '-0.75'])), '3.000000');
});
