import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exactMoneyText, stringifyAnswer, withExactMoney } from '#src/analytics/money.ts';
import { parseDecimal } from '#src/lib/decimal.ts';

const row = (text: string) =>
  withExactMoney({ key: 'k', cost_usd: Number(text) }, { cost_usd: parseDecimal(text) });

test('a sum with more digits than a double holds is written to the last digit, nested or not', () => {
  const long = row('0.092962551233532016');
  const answer = { window: null, data: [row('0.5'), { level: [long] }] };
  assert.equal(
    stringifyAnswer(answer),
    '{"window":null,"data":[{"key":"k","cost_usd":0.5},{"level":[{"key":"k","cost_usd":0.092962551233532016}]}]}',
  );
  assert.equal(exactMoneyText(long, 'cost_usd'), '0.092962551233532016');
  // a client reading doubles gets the double it got before
  assert.equal(JSON.parse(stringifyAnswer(answer)).data[1].level[0].cost_usd, Number('0.092962551233532016'));
});

test('a sum the number writes exactly needs nothing recorded, and the answer is plain JSON', () => {
  const rows = ['0.012345', '12', '0.000001', '123456.789'].map(row);
  for (const r of rows) assert.equal(exactMoneyText(r, 'cost_usd'), undefined);
  const answer = { data: rows };
  assert.equal(stringifyAnswer(answer, 2), JSON.stringify(answer, undefined, 2));
});

test('a recorded text no longer stands for a field whose number was changed after', () => {
  const r = row('0.092962551233532016');
  r.cost_usd = 1;
  assert.equal(exactMoneyText(r, 'cost_usd'), undefined);
  assert.equal(stringifyAnswer(r), '{"key":"k","cost_usd":1}');
});
