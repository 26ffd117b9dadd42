/**
 * @module How many tokens a text is, estimated without a tokenizer, in quarter tokens: about 4 ASCII
 * characters a token, 2 characters of other alphabets (accented Latin, Cyrillic, Greek, Arabic, Hebrew…)
 * and 1 CJK, kana, Hangul or emoji character. Characters / 4 alone undercounts a Japanese text about
 * fourfold. Routing's input estimate (routing/request-facts.ts) and the output of a call that ended before
 * the provider stated it (llm/partial-usage.ts) both count with it.
 */

/** Quarter tokens per token (the unit textWeight counts in). */
export const QUARTERS_PER_TOKEN = 4;

/**
 * A text's estimated tokens in quarter tokens: 1 per ASCII character, 2 per other character below U+2E80,
 * 4 per character from there on (CJK, kana, Hangul) and per character outside the BMP (emoji, rare CJK).
 */
export function textWeight(text: string): number {
  // ASCII text (its UTF-8 length is its length, measured natively) needs no character walk
  if (Buffer.byteLength(text) === text.length) return text.length;
  let weight = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) weight += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      weight += 4; // a surrogate pair: one character
      i++;
    } else weight += c < 0x2e80 ? 2 : 4;
  }
  return weight;
}
