/**
 * @module The hybrid fingerprint's similarity sketch (revision h1): MinHash over the words of the last
 * user message, cut into bands (locality-sensitive hashing). Two prompts whose word sets overlap by a
 * Jaccard similarity J share at least one band with probability 1 − (1 − J^ROWS)^BANDS: 0.98 at J = 0.6
 * ("fix the failing test in auth" / "… in billing"), 0.88 at J = 0.5, 0.45 at J = 0.33, 0.12 at J = 0.2
 * and 0.016 at J = 0.1.
 */

/** Prefix of this sketch revision; raised when words, hashes or bands change. */
export const SKETCH_REVISION = 'h1';
/** Bands per sketch and MinHash values per band. */
export const BANDS = 16;
export const ROWS = 3;
/** The sketch reads at most this many characters from the start of the message. */
export const SKETCH_TEXT_LIMIT = 1024;
/** The single band of a message without words. */
export const EMPTY_SKETCH = `${SKETCH_REVISION}:empty`;
/** sketchText remembers the sketches of this many distinct texts sent twice or more (see RECENT_SKETCHES). */
export const RECENT_SKETCH_COUNT = 64;

/**
 * The words a sketch is made of: letter/digit runs, identifiers split at camelCase and snake_case joints,
 * lowercased, every digit run written `#` (`TS2322` → `ts#`), common English function words and single
 * letters dropped; Chinese, Japanese and Korean runs become overlapping character pairs.
 */
export function sketchWords(text: string): Set<string> {
  const words = new Set<string>();
  const head = text.length > SKETCH_TEXT_LIMIT ? text.slice(0, SKETCH_TEXT_LIMIT) : text;
  const add = (w: string) => {
    if ((w.length >= 2 || w === '#') && !STOPWORDS.has(w)) words.add(w);
  };
  unicodeWords(head, add, words);
  return words;
}

/**
 * The BANDS band strings `h1:<band>:<8 hex>` of a text, or [`h1:empty`] when it has no words. The array
 * is frozen: the sketch of a recent text is handed out again (RECENT_SKETCHES), to every request sending it.
 */
export function sketchText(text: string): string[] {
  const head = text.length > SKETCH_TEXT_LIMIT ? text.slice(0, SKETCH_TEXT_LIMIT) : text;
  const known = RECENT_SKETCHES.get(head);
  if (known !== undefined) {
    // used again: to the back of the Map's order, so the least recently used text is dropped first
    RECENT_SKETCHES.delete(head);
    RECENT_SKETCHES.set(known.key, known);
    return known.bands;
  }
  const bands = Object.freeze(sketchHead(head)) as string[];
  if (!seenBefore(fnv1a(head))) return bands; // kept only once seen twice (see SEEN_ONCE)
  const oldest =
    RECENT_SKETCHES.size >= RECENT_SKETCH_COUNT ? RECENT_SKETCHES.keys().next().value : undefined;
  if (oldest !== undefined) RECENT_SKETCHES.delete(oldest);
  const key = head === text ? text : ownCopy(head);
  RECENT_SKETCHES.set(key, { key, bands });
  return bands;
}

// --- internal ---

/**
 * The sketches of the RECENT_SKETCH_COUNT distinct texts used most recently (their first SKETCH_TEXT_LIMIT
 * characters, all a sketch reads), the least recently used dropped first, so a busy agent's prompt stays
 * while one-off texts come and go (its key kept beside it: a hit re-inserts the stored key, never the
 * caller's string, which may be a slice of a much longer one): an agent's tool loop sends its user message again with each
 * tool result (the last user message with text stays the same), so it is sketched twice a loop (SEEN_ONCE),
 * not once a request. Keyed by the exact text, so a remembered sketch is the one sketchHead makes; at most
 * ~200 KiB held (2 KiB of text and 16 band strings an entry). Handed out as it is, frozen: a copy per
 * request would cost what an event holding it costs anyway.
 */
const RECENT_SKETCHES = new Map<string, { readonly key: string; readonly bands: string[] }>();

/**
 * The hashes of the last SEEN_ONCE.length texts sketched afresh. A text enters RECENT_SKETCHES only when
 * its hash is here, the second time it is sketched: a prompt sent once (chat traffic) is not kept, which
 * would carry it and its bands past a scavenge into the old generation (~1 KiB a request), and a tool loop
 * pays one sketch more. A hash shared by two texts only lets one be kept early: the Map is keyed by the text.
 */
const SEEN_ONCE = new Int32Array(256);
let seenOnceNext = 0;

/** Whether `hash` is among SEEN_ONCE; if not, it is added (the oldest dropped). */
function seenBefore(hash: number): boolean {
  for (let i = 0; i < SEEN_ONCE.length; i++) if (SEEN_ONCE[i] === hash) return true;
  SEEN_ONCE[seenOnceNext] = hash;
  seenOnceNext = (seenOnceNext + 1) % SEEN_ONCE.length;
  return false;
}

/**
 * A copy of the first SKETCH_TEXT_LIMIT characters of a longer text that holds nothing else: a slice of a
 * string keeps the whole string alive (a message of megabytes), a key in RECENT_SKETCHES as long as it is
 * kept. A text of at most SKETCH_TEXT_LIMIT characters is kept as given (a message's text is a string of
 * its own: JSON.parse makes one, and text blocks joined hold only those blocks).
 */
function ownCopy(head: string): string {
  return Buffer.from(head, 'utf16le').toString('utf16le');
}

/** sketchText of a text of at most SKETCH_TEXT_LIMIT characters, made afresh. */
function sketchHead(head: string): string[] {
  // the hashes of the words, not the words: MinHash reads nothing else, and equal words hash alike
  // the fast path reads every character outside A-Z, a-z and 0-9 as a separator, as the general one reads
  // punctuation, symbols, emoji and marks: only a letter or digit outside ASCII needs the general path
  const fast = Buffer.byteLength(head) === head.length || !NON_ASCII_LETTER_OR_DIGIT.test(head);
  const hashes = fast ? asciiWordHashes(head) : Int32Array.from(sketchWords(head), fnv1a);
  if (hashes.length === 0) return [EMPTY_SKETCH];
  const mins = minHashes(hashes);
  const out = new Array<string>(BANDS);
  for (let b = 0; b < BANDS; b++) {
    let h = FNV_OFFSET ^ b;
    for (let r = 0; r < ROWS; r++) h = Math.imul(h ^ mins[b * ROWS + r] ^ SIGN_BIT, FNV_PRIME);
    out[b] = bandString(b, fmix32(h));
  }
  return out;
}

/** The character codes of the hex digits 0-f. */
const HEX_CODES = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const REVISION_0 = SKETCH_REVISION.charCodeAt(0);
const REVISION_1 = SKETCH_REVISION.charCodeAt(1);
const COLON = 58;
const ZERO = 48;

/**
 * The BANDS × ROWS MinHash minima of the word hashes: for each seed, the least fmix32(word ^ seed) read
 * unsigned, with its top bit flipped (everything stays a 32-bit integer: a hash above 2^31 as a double
 * costs a heap number, and with the flip a signed comparison orders the unsigned values). This loop is
 * most of a sketch's cost (48 hashes a word), so fmix32 is written out here, and its first step, linear
 * over XOR (x ^ (x >>> 16) of word ^ seed is the XOR of that step on each), is taken once per word and
 * once per seed (SEEDS_MIXED) instead of 48 times a word; each minimum is kept in a local across the
 * words. MINS and MIXED_HASHES are reused by every call (synchronous).
 */
function minHashes(hashes: Int32Array): Int32Array {
  const n = hashes.length;
  const mixed = n <= MIXED_HASHES.length ? MIXED_HASHES : new Int32Array(n);
  for (let w = 0; w < n; w++) {
    const h = hashes[w];
    mixed[w] = h ^ (h >>> 16);
  }
  for (let i = 0; i < SEEDS_MIXED.length; i++) {
    const s = SEEDS_MIXED[i];
    let min = 0x7fffffff;
    for (let w = 0; w < n; w++) {
      let x = Math.imul(mixed[w] ^ s, 0x85ebca6b);
      x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
      x = x ^ (x >>> 16) ^ SIGN_BIT;
      if (x < min) min = x;
    }
    MINS[i] = min;
  }
  return MINS;
}

/**
 * `h1:<band>:<8 hex>` made as one string from its character codes (a sketch is made on every gateway
 * request: a template of toString(16) and padStart made four strings a band, a Buffer read out as latin1
 * a call into C++ a band).
 */
// biome-ignore format: one band string a line
function bandString(band: number, h: number): string {
  return band < 10
    ? String.fromCharCode(REVISION_0, REVISION_1, COLON, ZERO + band, COLON,
        hex(h, 28), hex(h, 24), hex(h, 20), hex(h, 16), hex(h, 12), hex(h, 8), hex(h, 4), hex(h, 0))
    : String.fromCharCode(REVISION_0, REVISION_1, COLON, ZERO + 1, ZERO + band - 10, COLON,
        hex(h, 28), hex(h, 24), hex(h, 20), hex(h, 16), hex(h, 12), hex(h, 8), hex(h, 4), hex(h, 0));
}

/** The character code of the hex digit of `h` at bit `shift` (no closure: `h` stays a 32-bit integer). */
function hex(h: number, shift: number): number {
  return HEX_CODES[(h >>> shift) & 0xf];
}

/**
 * The FNV-1a hashes of the words sketchWords finds in a text whose letters and digits are all ASCII
 * (letter/digit runs cut at every other character and at lower→upper joints, lowercased, a digit run as
 * `#`), hashed from the character codes as the scan goes, without a string per word: what a request's
 * fingerprint costs on the gateway's hot path (sketchWords, the general path, serves every other text).
 * Only a word whose hash is a function word's is spelled out.
 */
function asciiWordHashes(text: string): Int32Array {
  // no closure over these: a hash kept in a closure's context is a heap number at each character once it
  // leaves the small-integer range (half of all hashes), ~1.6 KiB per gateway request
  const seen = nextSeenMark();
  let count = 0;
  let start = -1;
  let h = 0;
  let length = 0;
  let inDigits = false;
  let prev = 0; // 0 other, 1 lower, 2 upper, 3 digit
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const kind = c >= 97 && c <= 122 ? 1 : c >= 65 && c <= 90 ? 2 : c >= 48 && c <= 57 ? 3 : 0;
    if (start >= 0 && (kind === 0 || (kind === 2 && prev === 1))) {
      count = keepWord(text, start, i, h | 0, length, inDigits, seen, count);
      start = -1;
    }
    if (kind !== 0) {
      if (start < 0) {
        start = i;
        h = FNV_OFFSET;
        length = 0;
        inDigits = false;
      }
      if (kind !== 3) {
        h = Math.imul(h ^ (c | 0x20), FNV_PRIME); // c | 0x20 lowercases A–Z
        length++;
        inDigits = false;
      } else if (!inDigits) {
        h = Math.imul(h ^ HASH_SIGN, FNV_PRIME); // a run of digits is one '#'
        length++;
        inDigits = true;
      }
    }
    prev = kind;
  }
  if (start >= 0) count = keepWord(text, start, text.length, h | 0, length, inDigits, seen, count);
  return WORD_HASHES.subarray(0, count);
}

/** The word text[start, end) of hash `word` added to WORD_HASHES at `count` if it is kept; the new count. */
function keepWord(
  text: string,
  start: number,
  end: number,
  word: number,
  length: number,
  inDigits: boolean,
  seen: number,
  count: number,
): number {
  // a single character is kept only when it is a digit run ('#')
  if (length < 2 && !(length === 1 && inDigits)) return count;
  if (STOPWORD_HASHES.has(word) && isStopword(text, start, end, word)) return count;
  if (firstSighting(word, seen)) WORD_HASHES[count++] = word;
  return count;
}

/**
 * The ASCII path's distinct word hashes, in buffers reused by every call (sketchText runs to its end
 * without yielding): a word takes two characters and a separator, a digit run ('#') one and a separator, so
 * SKETCH_TEXT_LIMIT characters hold fewer distinct words than WORD_HASHES has room for; SEEN_SLOTS is an
 * open-addressing set at most a quarter full, whose slots count as taken only under the current mark.
 */
const WORD_HASHES = new Int32Array(SKETCH_TEXT_LIMIT);
const SEEN_BITS = 11;
const SEEN_SLOTS = new Int32Array(1 << SEEN_BITS);
const SEEN_MARKS = new Uint32Array(1 << SEEN_BITS);
let seenMark = 0;

function nextSeenMark(): number {
  seenMark = (seenMark + 1) >>> 0;
  if (seenMark === 0) {
    SEEN_MARKS.fill(0); // after 2^32 - 1 sketches: no slot may keep an old mark that reads as the new one
    seenMark = 1;
  }
  return seenMark;
}

/** True the first time `hash` is offered under `mark`, and then remembers it. */
function firstSighting(hash: number, mark: number): boolean {
  const mask = SEEN_SLOTS.length - 1;
  for (let i = (hash ^ (hash >>> SEEN_BITS)) & mask; ; i = (i + 1) & mask) {
    if (SEEN_MARKS[i] !== mark) {
      SEEN_MARKS[i] = mark;
      SEEN_SLOTS[i] = hash;
      return true;
    }
    if (SEEN_SLOTS[i] === hash) return false;
  }
}

function unicodeWords(text: string, add: (w: string) => void, words: Set<string>): void {
  for (const token of text.match(WORD) ?? []) {
    if (CJK.test(token)) {
      if (token.length === 1) words.add(token);
      for (let i = 0; i + 1 < token.length; i++) words.add(token.slice(i, i + 2));
      continue;
    }
    // a token without an uppercase letter has no lower→upper joint: split would give it back whole
    if (!UPPERCASE.test(token)) add(token.toLowerCase().replace(DIGITS, '#'));
    else for (const part of token.split(CAMEL_JOINT)) add(part.toLowerCase().replace(DIGITS, '#'));
  }
}

const WORD = /[\p{L}\p{N}]+/gu;
/** A letter or digit that is no ASCII character (a code point: a surrogate pair is one character). */
const NON_ASCII_LETTER_OR_DIGIT = /(?![\0-\x7f])[\p{L}\p{N}]/u;
const CAMEL_JOINT = /(?<=\p{Ll})(?=\p{Lu})/u;
/** A character a lower→upper joint (CAMEL_JOINT) can end at. */
const UPPERCASE = /\p{Lu}/u;
const DIGITS = /\d+/g;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

// biome-ignore format: one list
const STOPWORDS = new Set([
  'a', 'an', 'the', 'and', 'or', 'but', 'if', 'then', 'else', 'of', 'in', 'on', 'at', 'to', 'for', 'from',
  'by', 'with', 'as', 'is', 'are', 'was', 'were', 'be', 'been', 'it', 'its', 'this', 'that', 'these', 'those',
  'me', 'my', 'we', 'our', 'you', 'your', 'he', 'she', 'they', 'them', 'their', 'there', 'here', 'what',
  'which', 'who', 'how', 'why', 'when', 'where', 'can', 'could', 'would', 'should', 'will', 'do', 'does',
  'did', 'not', 'no', 'so', 'please', 'just', 'some', 'any', 'all', 'into', 'about', 'also', 'than', 'too',
  'very', 'have', 'has', 'had', 'now', 'up', 'out', 'let', 'us',
]);

const HASH_SIGN = '#'.charCodeAt(0);
/** The function words by their hash (a hash may stand for more than one). */
const STOPWORD_HASHES: ReadonlyMap<number, string[]> = [...STOPWORDS].reduce((byHash, w) => {
  const h = fnv1a(w);
  byHash.set(h, [...(byHash.get(h) ?? []), w]);
  return byHash;
}, new Map<number, string[]>());

/** Whether the ASCII letters text[start, end), lowercased, are a function word of hash `word` (no string made). */
function isStopword(text: string, start: number, end: number, word: number): boolean {
  for (const w of STOPWORD_HASHES.get(word) ?? []) {
    if (w.length !== end - start) continue;
    let k = 0;
    while (k < w.length && (text.charCodeAt(start + k) | 0x20) === w.charCodeAt(k)) k++;
    if (k === w.length) return true;
  }
  return false;
}
/** XORed into a 32-bit value, it maps unsigned order onto signed order. */
const SIGN_BIT = 0x80000000 | 0;

/** One seed per MinHash function, fixed forever for revision h1. */
const SEEDS = Int32Array.from({ length: BANDS * ROWS }, (_, i) => fmix32(Math.imul(i + 1, 0x9e3779b9)));
/** Each seed through fmix32's first step, s ^ (s >>> 16) (see minHashes). */
const SEEDS_MIXED = SEEDS.map((s) => s ^ (s >>> 16));
const MINS = new Int32Array(BANDS * ROWS);
const MIXED_HASHES = new Int32Array(SKETCH_TEXT_LIMIT);

/** FNV-1a of a string's UTF-16 code units, as a signed 32-bit integer (the bits are the hash). */
function fnv1a(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h | 0;
}

/**
 * MurmurHash3's 32-bit finaliser: a bijection that mixes every input bit into every output bit. Signed
 * 32-bit in and out (the bits are the hash; `>>> 0` reads it unsigned).
 */
function fmix32(x: number): number {
  let h = x | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}
