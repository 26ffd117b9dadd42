/**
 * @module The gateway's input-token estimate for a model whose provider has no counting endpoint
 * (POST /v1/messages/count_tokens, issue 13): the routing estimate (characters / 4) corrected for scripts
 * that take more tokens per character. ASCII runs about 4 characters a token, other alphabets (accented
 * Latin, Cyrillic, Greek, Arabic, Hebrew…) about 2, and CJK, kana, Hangul and emoji about 1 — chars / 4
 * alone undercounts a Japanese prompt about fourfold, and Claude Code compacts its context by this count.
 */
import type { ContentBlock } from '../canonical/message.ts';
import type { CanonicalRequest } from '../canonical/request.ts';

/** Tokens to add to `chars / 4` for the text of `req`, by script. */
export function scriptTokenCorrection(req: CanonicalRequest): number {
  let extra = 0;
  const text = (s: string) => {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) continue;
      // a character outside the BMP (emoji, rare CJK) is two code units, counted once as about a token
      if (c >= 0xd800 && c <= 0xdbff) i++;
      extra += c < 0x2e80 ? 0.25 : 0.75; // 1/2 or 1 token a character, less the 1/4 already counted
    }
  };
  const blocks = (list: readonly ContentBlock[]) => {
    for (const b of list) {
      if (b.type === 'text') text(b.text);
      else if (b.type === 'thinking') text(b.thinking);
      else if (b.type === 'tool_use') text(JSON.stringify(b.input));
      else if (b.type === 'tool_result') {
        if (typeof b.content === 'string') text(b.content);
        else blocks(b.content);
      }
    }
  };
  blocks(req.system);
  for (const m of req.messages) blocks(m.content);
  return Math.ceil(extra);
}
