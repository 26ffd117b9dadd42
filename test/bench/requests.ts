/**
 * The request bodies of the gateway benchmark. Every target gets the same bytes: the fake and the
 * passthrough ignore the `provider:` prefix of the model, the gateway routes on it. The cross-shape body
 * (Anthropic Messages naming an OpenAI model) is a plain Anthropic call for the fake and the passthrough,
 * which cannot translate, so their cross figures are the Anthropic path's. `responses` is the OpenAI
 * Responses API on an OpenAI model (same wire).
 */

export const SHAPES = ['openai', 'anthropic', 'cross', 'responses'] as const;
export type Shape = (typeof SHAPES)[number];

export interface BenchRequest {
  method: 'POST';
  path: string;
  headers: Record<string, string>;
  body: string;
}

export const OPENAI_MODEL = 'openai:gpt-5-mini';
export const ANTHROPIC_MODEL = 'anthropic:claude-haiku-4-5';

/** The request of `shape`; `dripMs` makes the fake delay every SSE frame (streaming only). */
export function benchRequest(
  shape: Shape,
  token: string,
  options: { stream?: boolean; dripMs?: number } = {},
): BenchRequest {
  const stream = options.stream === true;
  const prompt = options.dripMs ? `${USER_TEXT} [[fake:drip=${options.dripMs}]]` : USER_TEXT;
  if (shape === 'openai') {
    return {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        model: OPENAI_MODEL,
        max_completion_tokens: 256,
        messages: [
          { role: 'system', content: SYSTEM_TEXT },
          { role: 'user', content: prompt },
        ],
        ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      }),
    };
  }
  if (shape === 'responses') {
    return {
      method: 'POST',
      path: '/v1/responses',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        model: OPENAI_MODEL,
        max_output_tokens: 256,
        instructions: SYSTEM_TEXT,
        input: [{ role: 'user', content: prompt }],
        ...(stream ? { stream: true } : {}),
      }),
    };
  }
  return {
    method: 'POST',
    path: '/v1/messages',
    headers: { 'content-type': 'application/json', 'x-api-key': token, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: shape === 'cross' ? OPENAI_MODEL : ANTHROPIC_MODEL,
      max_tokens: 256,
      system: SYSTEM_TEXT,
      messages: [{ role: 'user', content: prompt }],
      ...(stream ? { stream: true } : {}),
    }),
  };
}

// --- internal ---

// About 1 KiB of prompt: a typical short assistant turn, so body parsing costs what it usually does.
const SYSTEM_TEXT =
  'You are a concise assistant for an engineering team. Answer in plain English, prefer short ' +
  'paragraphs, cite file paths when you mention code, and say so when you are unsure. Never invent ' +
  'APIs. When the user asks for a command, give the exact command first and the explanation after it. ' +
  'Keep answers under two hundred words unless the user asks for more detail.';

const USER_TEXT =
  'Our service answers slowly after a deploy. The p50 latency went from 40 ms to 65 ms and CPU per ' +
  'request doubled, while the request mix did not change. What are the first three things to check, ' +
  'and which profiler output would tell us where the time goes? Please keep it short; we are in the ' +
  'middle of an incident and need a plan we can follow right away.';
