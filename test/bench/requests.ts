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
  /**
   * autocannon calls it before each request: it writes the next number over the prompt's request number
   * (same length), so no two requests carry the same prompt. A gateway that remembers what it computed from
   * a prompt it saw before (the slot-4 sketch does, for an agent's tool loop that resends its last user
   * message) is then measured on prompts it has not seen, as chat traffic is, not on one prompt repeated.
   */
  setupRequest?: (req: BenchRequest) => BenchRequest;
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
  const request = (path: string, headers: Record<string, string>, body: string): BenchRequest => ({
    method: 'POST',
    path,
    headers,
    body,
    setupRequest: numbered,
  });
  const prompt = options.dripMs ? `${USER_TEXT} [[fake:drip=${options.dripMs}]]` : USER_TEXT;
  if (shape === 'openai') {
    return request(
      '/v1/chat/completions',
      { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      JSON.stringify({
        model: OPENAI_MODEL,
        max_completion_tokens: 256,
        messages: [
          { role: 'system', content: SYSTEM_TEXT },
          { role: 'user', content: prompt },
        ],
        ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      }),
    );
  }
  if (shape === 'responses') {
    return request(
      '/v1/responses',
      { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      JSON.stringify({
        model: OPENAI_MODEL,
        max_output_tokens: 256,
        instructions: SYSTEM_TEXT,
        input: [{ role: 'user', content: prompt }],
        ...(stream ? { stream: true } : {}),
      }),
    );
  }
  return request(
    '/v1/messages',
    { 'content-type': 'application/json', 'x-api-key': token, 'anthropic-version': '2023-06-01' },
    JSON.stringify({
      model: shape === 'cross' ? OPENAI_MODEL : ANTHROPIC_MODEL,
      max_tokens: 256,
      system: SYSTEM_TEXT,
      messages: [{ role: 'user', content: prompt }],
      ...(stream ? { stream: true } : {}),
    }),
  );
}

// --- internal ---

/** The prompt's request number: REQUEST_NUMBER_DIGITS digits after it, rewritten before each request. */
const REQUEST_NUMBER = 'Incident #';
const REQUEST_NUMBER_DIGITS = 8;
let requestNumber = 0;

function numbered(req: BenchRequest): BenchRequest {
  const at = req.body.indexOf(REQUEST_NUMBER) + REQUEST_NUMBER.length;
  requestNumber = (requestNumber + 1) % 10 ** REQUEST_NUMBER_DIGITS;
  const digits = String(requestNumber).padStart(REQUEST_NUMBER_DIGITS, '0');
  return { ...req, body: req.body.slice(0, at) + digits + req.body.slice(at + REQUEST_NUMBER_DIGITS) };
}

// About 1 KiB of prompt: a typical short assistant turn, so body parsing costs what it usually does.
const SYSTEM_TEXT =
  'You are a concise assistant for an engineering team. Answer in plain English, prefer short ' +
  'paragraphs, cite file paths when you mention code, and say so when you are unsure. Never invent ' +
  'APIs. When the user asks for a command, give the exact command first and the explanation after it. ' +
  'Keep answers under two hundred words unless the user asks for more detail.';

const USER_TEXT =
  `${REQUEST_NUMBER}${'0'.repeat(REQUEST_NUMBER_DIGITS)}. ` +
  'Our service answers slowly after a deploy. The p50 latency went from 40 ms to 65 ms and CPU per ' +
  'request doubled, while the request mix did not change. What are the first three things to check, ' +
  'and which profiler output would tell us where the time goes? Please keep it short; we are in the ' +
  'middle of an incident and need a plan we can follow right away.';
