import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RECENT_SKETCH_COUNT, sketchText } from '#src/routing/pattern/sketch.ts';
import { CORPUS, fingerprintOf } from './fingerprint-corpus.ts';

// Recorded from the code that wrote the trace stores in use (s1 and h1 as shipped): a stored fingerprint
// must keep matching the one a request gets now, or slot 4 forgets every route it learned. A faster
// fingerprint has to give these values bit for bit; a different one needs a new revision instead.
// [case, structural, message count, the 16 band hashes in band order (or h1:empty)]
const EXPECTED: Array<[string, string, number, string]> = [
  [
    'bench prompt',
    's1:85bdaa687aebff9e',
    1,
    '996c34a8 35ab606a f46dd82c 13329866 5a6c90b4 a95552e0 15c649a4 da36fe9c 6ed18fef ecc05dac 8dd6ec5d fbda9593 4bcbe206 3e9ae18c a28189d6 e4eea277',
  ],
  ['empty user text', 's1:497836197ded4a36', 1, 'h1:empty'],
  ['only function words and punctuation', 's1:3da091eb01e0d624', 1, 'h1:empty'],
  [
    'one word',
    's1:3fa65de8303f38e8',
    1,
    '5f38aea5 16dc4a7c 75d8dde7 9549e4be 6bfa4d0a 9fe9cf54 6687ced9 873bc996 09ce2c10 cfd18d89 5cc03e6c 313f4891 86207157 9526a690 88c37dd0 9755f539',
  ],
  [
    'identifiers, digits, acronyms',
    's1:9a6d4508613d1b47',
    1,
    '184e0c00 7e8e79a9 0f2d6a17 508af3e2 1f04efee ff7440af e049bccb 1725bade 1e33861d ecccb6c6 bfdb534e f632078d 78014881 38b5b3af 6af2f641 61f27f34',
  ],
  [
    'text parts and an image URL',
    's1:456c353aa2103afc',
    1,
    'cafbc5f5 aad61c25 95579420 f9d3ba5a 56640295 64d57344 ee080a7f 025842aa 670a5a47 e75d5a8d 4d488304 ec2d4978 8ec3586b 11c9c582 bb94d129 20b2874c',
  ],
  [
    'tool call then tool result last',
    's1:78ccc9a9d56005d3',
    3,
    '1f86614a d58f7a7d ec223c1e 5bd2d99c 14b04ccb c2f67071 2bb6fdd8 0936be35 aa2d4c16 82022dcc da4ccbac d569f3e2 8902e293 362d65be 25e0cebc 11df03eb',
  ],
  [
    'accented Latin',
    's1:31655479fbc696ed',
    1,
    '8d208c22 9d7757e3 67cd566a 0223f8bf 583e1ace 66fa6016 d31c92b9 62cad92d 5e4fd88d e0f2b032 276feb9e 9f97ca37 d988ceb6 0d56ca95 69cdcbe6 36ca9c2a',
  ],
  [
    'emoji',
    's1:1b45bda95073d3e7',
    1,
    'd4503596 ec1aa73b 8958e790 bae3292a bbab9b19 4bd61296 c7a6e151 98994224 425fc80c 7b927005 705a1642 1c85e488 9412c73f 659ddf10 f44c3c4c d247bcf3',
  ],
  [
    'Chinese',
    's1:31655479fbc696ed',
    1,
    '3ad5b270 c37ec9f0 7c564625 306adbc6 1d7ff446 09e04708 c01bd4a8 5bad7339 e4481f30 ddf140fa 063f4877 33be77b0 a04d0161 dc2ba2ff 49b868d7 f6e1647c',
  ],
  [
    'Japanese kana and kanji',
    's1:31655479fbc696ed',
    1,
    '00a7d71e 1255c576 fc5c4f00 3624ac7e cae20c6a b47b83b9 5c372dea 78f565b0 77e2b7f4 27772cdb f4349cf0 18644910 c66920d3 537cec81 410c910d 7ace3ccb',
  ],
  [
    'Korean',
    's1:31655479fbc696ed',
    1,
    '043af0d1 41173a57 341e702f 959c3040 5a23bca6 f5f89835 35e8d892 108bed8b cce7aff2 86ad6712 e4b5340e 3dd55e5a 6a5593cd b152b12c 71392a8b 6dbaa45d',
  ],
  [
    'Greek and German case folding',
    's1:1b45bda95073d3e7',
    1,
    '29bf0d01 78dfb144 9d3813f1 c6e64afc 49250114 5fb815e0 90e8d090 1384611f 65bbcf65 7826035b 5d67c9e0 56a32315 9c6fa0d2 49b0d5f2 eb3e42a3 243fa8ec',
  ],
  [
    'a single CJK character among words',
    's1:1b45bda95073d3e7',
    1,
    'c937be83 4b76f8b2 056a8576 c47ec387 78174374 a97593cf e1bf260d 9fa5e8cc 1605d824 261084c7 c34cff80 40c48e6f dcaee96f 983f1493 2c7287b8 54310c4b',
  ],
  [
    'long ASCII text (4 KB)',
    's1:d09cd23a76c611e5',
    1,
    '94507f75 acf65a3c 3f8a66a3 19bcb5c2 b06c3d8a dee9dbae d136a460 6f186d6f 05782af3 4765cb0c 3d52a4c8 f7d62c30 f306091a b3026a6f cc42598a 5d956963',
  ],
  [
    'ASCII head, non-ASCII past 1,024 characters',
    's1:25044aa05ffd6ef9',
    1,
    '94507f75 acf65a3c 3f8a66a3 19bcb5c2 b06c3d8a dee9dbae d136a460 6f186d6f 05782af3 4765cb0c 3d52a4c8 f7d62c30 f306091a b3026a6f cc42598a 5d956963',
  ],
  [
    'a word cut at 1,024 characters',
    's1:25044aa05ffd6ef9',
    1,
    '82cee843 3acd611c 494822ac 072d2caf b22a4b15 ec93065b ab7dfea3 e8884037 27254609 6b2e04df 30084580 3e24207c 868f25b8 ac1904c4 9f46760a de321757',
  ],
  [
    'non-ASCII inside the first 1,024 characters of a long text',
    's1:50878be6441a004e',
    1,
    '94507f75 acf65a3c 3f8a66a3 19bcb5c2 b06c3d8a dee9dbae d136a460 6f186d6f 05782af3 4765cb0c 3d52a4c8 f7d62c30 f306091a b3026a6f cc42598a 5d956963',
  ],
  [
    'control characters and a lone surrogate',
    's1:699ba2452fa116d2',
    1,
    '87bf609a 50a65ede 6464d017 62a2c565 e0567c55 409e7915 187ed55a 769ff916 1e196e26 ec114477 bad7befa e2bd0b0d 3dfd0874 9d984e79 23498974 fa2edce1',
  ],
  [
    'curly quotes, dashes, an ellipsis and a combining accent',
    's1:31655479fbc696ed',
    1,
    '5b6919a2 7bb1265f 094408ed 890c3b08 567f0851 8ae3f0a8 47e14766 5124740d 747996d1 310f090d 410b7ffe cf72974a d55a933e de97db95 693e2f71 bda479a3',
  ],
  [
    'an astral letter and digit among emoji',
    's1:1b45bda95073d3e7',
    1,
    '311146d9 f3998a6b 083be243 0c480bf5 355281c0 515ddd30 a7a0448d 21131c55 e272795f 607f99f0 3b5dcc08 485459ff ac882fd6 f8ee6b75 9b3c71da eb890a21',
  ],
  [
    'nine messages',
    's1:2ca5c4028705db22',
    9,
    'bf82c09d c66fafe2 94ad5de0 0b2b01ac ccc00d4f 86933a6b 824df0af 9f6fdc7b bfd6c30a 3a3df358 2b82f181 321cbfaf 499c576a e527f6a2 a2dfd9b2 3e4373a1',
  ],
  [
    'Anthropic system blocks and an image block',
    's1:31b163d2e412ef30',
    1,
    '55a7b983 866e585e 3c1c3c03 2d93d52e db7056b7 45a4224c 7483c520 964192de 974b45a5 e55ef42b a9150882 1ccb8bc9 397a0e47 7597bf29 1c2b54f2 894536fc',
  ],
  [
    'Anthropic tool_use then a tool_result-only user turn',
    's1:43572124b97a4d57',
    3,
    '2ffd3041 f088e0be 8e50f6c5 92cb3412 eef82634 768d5ee5 881f42b5 7af7f43f c77e2b11 fe7f3e24 38801db8 28f8a437 92185f86 7d3de2a7 77cb2066 bb4def2c',
  ],
  [
    'Anthropic several text blocks in the last user turn',
    's1:31655479fbc696ed',
    1,
    'c5ded421 fd97f5a5 3bf93210 f12469dd d4c8068b 926c5ce3 adaa5650 28a2a7bc dd687585 6f12694f 5da9c402 f2b1bb46 5e50bead 878848b4 d0b2d40a 34992b88',
  ],
  [
    'Anthropic thinking blocks and Cyrillic',
    's1:09b0b873354563e6',
    3,
    '27b39d8b e3a47346 98849df8 1ab06067 907c3ca8 de4a28d1 20158fc4 a3572be4 5e5bebc0 3a3b40e3 a7b7d667 5bb7f71e 9cdb18d8 219d9cf9 a25fa130 e4534680',
  ],
  [
    'Anthropic string system and an empty-text user turn',
    's1:02f3e36551684b5d',
    3,
    '01063f1a 18ba8593 41709d25 c3406bc7 36f5585e 33cc9447 f3acd018 5f87c9ee 333110e5 283abf29 5f178471 e6356d70 00779e84 a246cfd6 dad28ae7 d1f31e2b',
  ],
  [
    'Responses input string with instructions',
    's1:85bdaa687aebff9e',
    1,
    '996c34a8 35ab606a f46dd82c 13329866 5a6c90b4 a95552e0 15c649a4 da36fe9c 6ed18fef ecc05dac 8dd6ec5d fbda9593 4bcbe206 3e9ae18c a28189d6 e4eea277',
  ],
  [
    'Responses message items with an input image',
    's1:31b163d2e412ef30',
    1,
    '1cced217 4ba9ff3a ace94f63 069de09a 7cf16fdc d5cb4596 6bf4d3e9 581e0bd9 e5e86c2b 53317b99 95b2713e 1b51d337 159d5157 e2816cb2 d2b73705 c61ff35d',
  ],
  [
    'Responses function_call and function_call_output items',
    's1:b97536bed5dfafc6',
    3,
    '5cfdca64 c457b2d5 d5d9f432 5640c37c b64f4e70 0c6b3806 fb74117f c75c1087 764ec5a7 13acad92 a548e458 ddd6faba 3e1d7dfd 469284a1 6c7592be 24ec006a',
  ],
  [
    'Responses Arabic and Hebrew',
    's1:31655479fbc696ed',
    1,
    'c1522754 be59700f 0957acb6 5ba7fd83 3e68fa58 dd8e5fc1 aafaa3f6 8a8bb0db e684f7c0 056e7cec a55fb0f0 b58a5e68 175c398e f81683eb e0a4e54d 9f724faa',
  ],
  [
    'Responses developer item and a long mixed-script prompt',
    's1:27fe6b424fff029c',
    1,
    '3f73ea7f f7926697 f46dd82c fde74ef6 c786ab3e 34bd6e99 89f36792 449565e6 cdda49a6 219e9416 8dd6ec5d 049db565 e198af54 ba2dc991 d86f228c 24417b4e',
  ],
];

test('every request of the corpus keeps the fingerprint recorded for it (s1 and h1 frozen)', () => {
  assert.deepEqual(
    CORPUS.map((c) => c.name),
    EXPECTED.map(([name]) => name),
  );
  for (const [i, c] of CORPUS.entries()) {
    const [, structural, messages, bands] = EXPECTED[i];
    const sketch = bands === 'h1:empty' ? [bands] : bands.split(' ').map((hex, b) => `h1:${b}:${hex}`);
    assert.deepEqual(fingerprintOf(c), { structural, sketch, messages }, c.name);
  }
});

test('a fingerprint does not depend on the requests fingerprinted before it, remembered or not', () => {
  const first = CORPUS.map(fingerprintOf);
  const reversed = () => [...CORPUS].reverse().map(fingerprintOf).reverse();
  assert.deepEqual(reversed(), first); // sketched again: now remembered
  assert.deepEqual(reversed(), first); // remembered sketches
  // as many other texts as sketchText remembers, each sent twice, push the corpus out: sketched afresh
  for (let i = 0; i < 2 * RECENT_SKETCH_COUNT; i++) sketchText(`filler text number ${i >> 1} about caching`);
  assert.deepEqual(reversed(), first);
});

test('a remembered sketch cannot be changed: it is frozen, and the next request gets the same bands', () => {
  const text = 'Summarize the failing checks of this pull request';
  sketchText(text);
  const bands = sketchText(text); // the second time: remembered
  const kept = [...bands];
  assert.throws(() => {
    bands[0] = 'changed';
  }, TypeError);
  assert.throws(() => bands.pop(), TypeError);
  assert.deepEqual(sketchText(text), kept);
  assert.ok(Object.isFrozen(sketchText('a text never sketched before')));
});
