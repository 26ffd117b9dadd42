import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RouteFacts } from '#src/routing/facts.ts';
import {
  fingerprintRequest,
  patternKeys,
  powerOfTwoBucket,
  structuralParts,
} from '#src/routing/pattern/fingerprint.ts';
import {
  BANDS,
  EMPTY_SKETCH,
  RECENT_SKETCH_COUNT,
  ROWS,
  SKETCH_TEXT_LIMIT,
  sketchText,
  sketchWords,
} from '#src/routing/pattern/sketch.ts';
import { facts } from './routing-fixture.ts';

const base = (over: Partial<RouteFacts> = {}) =>
  facts({
    workspacePath: '/srv/app',
    hasTools: true,
    toolNames: ['run_command', 'read_file'],
    estimatedInputTokens: 3000,
    messageCount: 7,
    ...over,
  });

const shareBand = (a: string, b: string) => {
  const bands = new Set(sketchText(a));
  return sketchText(b).some((x) => bands.has(x));
};

test('structural parts: workspace, images, sorted tool set, power-of-two size and message buckets', () => {
  assert.deepEqual(structuralParts(base({ toolNames: ['run_command', 'read_file', 'read_file'] })), {
    workspace: '/srv/app',
    images: false,
    tools: ['read_file', 'run_command'],
    input_tokens_bucket: 4096,
    messages_bucket: 8,
  });
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 1000, 1024, 1025].map(powerOfTwoBucket),
    [0, 1, 2, 4, 4, 8, 1024, 1024, 2048],
  );
});

test('the structural fingerprint is pure, versioned, and changes with each part but not within a bucket', () => {
  const print = fingerprintRequest(base(), 'any text');
  assert.match(print.structural, /^s1:[0-9a-f]{16}$/);
  assert.equal(fingerprintRequest(base(), 'other text').structural, print.structural);
  assert.equal(
    fingerprintRequest(base({ toolNames: ['read_file', 'run_command'], estimatedInputTokens: 2049 }), '')
      .structural,
    print.structural,
  );
  const changed: Array<Partial<RouteFacts>> = [
    { workspacePath: '/srv/other' },
    { workspacePath: null },
    { hasImages: true },
    { toolNames: ['read_file'] },
    { toolNames: [] },
    { estimatedInputTokens: 5000 },
    { messageCount: 9 },
  ];
  for (const over of changed)
    assert.notEqual(fingerprintRequest(base(over), '').structural, print.structural, JSON.stringify(over));
  assert.equal(print.messages, 7);
});

test('the hybrid sketch has one band per MinHash group, versioned; no words is one empty band', () => {
  const bands = sketchText('fix the failing test in auth');
  assert.equal(bands.length, BANDS);
  for (const [i, b] of bands.entries()) assert.match(b, new RegExp(`^h1:${i}:[0-9a-f]{8}$`));
  assert.deepEqual(sketchText(''), [EMPTY_SKETCH]);
  assert.deepEqual(sketchText('the and of ?!'), [EMPTY_SKETCH]);
  assert.deepEqual(sketchText('Fix the failing TEST in auth'), bands, 'case does not matter');
});

test('revision h1 is frozen: recorded sketches keep matching new ones (fixed values)', () => {
  // values recorded when h1 shipped; a change of words, hashes or bands needs a new revision instead
  const hexes = (text: string) => sketchText(text).map((band, i) => band.replace(`h1:${i}:`, ''));
  assert.equal(
    hexes('Why does parseConfigYaml fail with TS2322 on line 104 of user_store.ts?').join(' '),
    '66226e53 b3b6ae9c d9c59bad de22cc00 b488d08c ce747ddb 442fb325 420c6313 ' +
      '47d974a6 28ef7566 c9f4646a 6cd1eca2 c170b48e 38b5b3af 504fba1e 3d0fc428',
  );
  assert.equal(
    hexes('HTTPServer x2 A1b2C3 __init__ foo-bar the THE a I 42').join(' '),
    '99ddace4 053ae0e4 13585016 a37ee84e d3e4931b 27f42f55 3db6b914 91d096a2 ' +
      'bc731bc5 7b63ed39 21fdd057 7af58b71 41629a76 c8a2e995 34e56c71 dd34cb00',
  );
});

test('the ASCII fast path sketches exactly as the general path does (random texts)', () => {
  // ' é' sends a text down the general (regex) path without adding a word: a single letter is dropped
  let seed = 7;
  const rnd = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  // characters outside ASCII that are no letter or digit (quotes, dashes, emoji, a combining accent, a lone
  // surrogate) are separators on both paths
  const alphabet =
    'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,?!\n\t’“”—…\u0301\ud83d😀🚀';
  const pieces = [' the ', ' and ', ' of ', 'fooBar', 'HTTPServer', 'x86_64', ' 42 ', ' a ', ' I '];
  for (let n = 0; n < 3000; n++) {
    let text = '';
    for (let j = Math.floor(rnd() * 60); j > 0; j--)
      text +=
        rnd() < 0.2
          ? pieces[Math.floor(rnd() * pieces.length)]
          : alphabet[Math.floor(rnd() * alphabet.length)];
    assert.deepEqual(sketchText(text), sketchText(`${text} é`), JSON.stringify(text));
  }
});

test('the ASCII fast path agrees with the general path on texts full of distinct words, one after another', () => {
  // as many distinct words as SKETCH_TEXT_LIMIT characters hold, and texts sharing words sketched in turn
  const word = (n: number) => String.fromCharCode(97 + (n % 26), 97 + (Math.floor(n / 26) % 26));
  const dense = Array.from({ length: 400 }, (_, n) => word(n)).join(' ');
  assert.ok(dense.length > SKETCH_TEXT_LIMIT);
  const texts = [dense, `${dense.slice(600)} zz`, 'fix the failing test in auth', dense, 'aa ab ac'];
  const fast = texts.map((t) => sketchText(t));
  const general = texts.map((t) => sketchText(`${t.slice(0, SKETCH_TEXT_LIMIT - 2)} é`));
  assert.deepEqual(fast[0], general[0]);
  assert.deepEqual(fast[3], fast[0], 'a text sketched again gets the same bands');
  for (let i = 1; i < texts.length; i++)
    if (texts[i].length <= SKETCH_TEXT_LIMIT - 2)
      assert.deepEqual(fast[i], sketchText(`${texts[i]} é`), texts[i]);
});

test('a remembered sketch in use stays remembered while one-off texts push the rest out', () => {
  // an agent's prompt (sent with every tool result) against a stream of other texts each sent twice
  const remembered = (text: string) => {
    sketchText(text);
    return sketchText(text); // the second time it is kept and handed out as is
  };
  const agent = remembered('refactor the billing module and keep its tests green');
  for (let n = 0; n < RECENT_SKETCH_COUNT * 3; n++) {
    remembered(`one-off request number ${n} about topic q${n.toString(36)}x`);
    assert.equal(sketchText('refactor the billing module and keep its tests green'), agent, `after ${n + 1}`);
  }
});

test('sketch words: identifiers split, numbers abstracted, function words dropped, CJK as pairs', () => {
  assert.deepEqual(
    [...sketchWords('Why does parseConfigYaml fail with TS2322 on line 104 of user_store.ts?')],
    ['parse', 'config', 'yaml', 'fail', 'ts#', 'line', '#', 'user', 'store', 'ts'],
  );
  assert.deepEqual([...sketchWords('修复登录测试')], ['修复', '复登', '登录', '录测', '测试']);
  assert.deepEqual([...sketchWords('Café naïve façade')], ['café', 'naïve', 'façade']);
});

// The table: what revision h1 answers for each pair. Near-duplicates share a band with probability
// 1 − (1 − J³)¹⁶ (0.98 at J = 0.6, 0.95 at J = 0.56), so one of them may miss: the rename pair does.
const CASES: Array<{ a: string; b: string; share: boolean }> = [
  { a: 'fix the failing test in auth', b: 'fix the failing test in billing', share: true },
  {
    a: 'Fix the failing test in src/auth/login.test.ts',
    b: 'fix the failing test in src/billing/invoice.test.ts',
    share: true,
  },
  {
    a: 'Summarize this pull request and list the risky changes',
    b: 'Summarize this pull request, list the risky changes.',
    share: true,
  },
  {
    a: 'Why does the build fail with error TS2322 on line 104?',
    b: 'why does the build fail with error TS2345 on line 88',
    share: true,
  },
  {
    a: 'Write unit tests for the parseConfig function in config.ts',
    b: 'Write unit tests for the loadRegistry function in registry.ts',
    share: true,
  },
  {
    a: 'Translate the following paragraph into French: hello world',
    b: 'Translate the following paragraph into French: good morning',
    share: true,
  },
  { a: '修复登录模块中失败的测试', b: '修复支付模块中失败的测试', share: true },
  {
    a: 'rename the variable userId to accountId across the repo',
    b: 'rename the variable orderId to purchaseId across the repo',
    share: false,
  },
  { a: 'fix the failing test in auth', b: 'write a haiku about autumn leaves', share: false },
  { a: 'fix the failing test in auth', b: 'explain how the billing invoice total is computed', share: false },
  {
    a: 'Summarize this pull request and list the risky changes',
    b: 'Translate the following paragraph into French',
    share: false,
  },
  {
    a: 'Write unit tests for the parseConfig function',
    b: 'What is the capital of Australia?',
    share: false,
  },
  { a: 'Why does the build fail with error TS2322?', b: 'Plan a three day trip to Lisbon', share: false },
  { a: '', b: 'hello there', share: false },
  { a: '修复登录模块中失败的测试', b: '今天天气很好', share: false },
];

test('near-duplicate prompts share a hybrid key, unrelated ones do not (table of cases)', () => {
  const f = base();
  for (const c of CASES) {
    const keysA = new Set(patternKeys(fingerprintRequest(f, c.a), 'hybrid'));
    const shared = patternKeys(fingerprintRequest(f, c.b), 'hybrid').some((k) => keysA.has(k));
    assert.equal(shared, c.share, `${c.a} | ${c.b}`);
    assert.equal(shareBand(c.a, c.b), c.share);
  }
  // the structural part still separates the same words in another workspace
  const keys = new Set(patternKeys(fingerprintRequest(f, CASES[0].a), 'hybrid'));
  const other = patternKeys(fingerprintRequest(base({ workspacePath: '/srv/x' }), CASES[0].a), 'hybrid');
  assert.ok(other.every((k) => !keys.has(k)));
});

test('over random word sets the share rate follows 1 − (1 − J³)¹⁶', () => {
  let seed = 20_260_101;
  const rnd = () => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed / 2 ** 32;
  };
  const word = () =>
    Array.from({ length: 6 }, () => String.fromCharCode(97 + Math.floor(rnd() * 26))).join('');
  for (const [common, own] of [
    [6, 2], // J = 0.6
    [4, 4], // J = 0.33
    [2, 9], // J = 0.1
  ]) {
    const pairs = 400;
    let hits = 0;
    for (let n = 0; n < pairs; n++) {
      const shared = Array.from({ length: common }, word);
      const a = [...shared, ...Array.from({ length: own }, word)].join(' ');
      const b = [...shared, ...Array.from({ length: own }, word)].join(' ');
      if (shareBand(a, b)) hits++;
    }
    const j = common / (common + 2 * own);
    const expected = 1 - (1 - j ** ROWS) ** BANDS;
    assert.ok(Math.abs(hits / pairs - expected) < 0.06, `J=${j.toFixed(2)}: ${hits / pairs} vs ${expected}`);
  }
});

test('a structural table has one key per request, a hybrid one the structural fingerprint per band', () => {
  const print = fingerprintRequest(base(), 'fix the failing test in auth');
  assert.deepEqual(patternKeys(print, 'structural'), [print.structural]);
  const hybrid = patternKeys(print, 'hybrid');
  assert.equal(hybrid.length, BANDS);
  assert.ok(hybrid.every((k, i) => k === `${print.structural}/${print.sketch[i]}`));
});
