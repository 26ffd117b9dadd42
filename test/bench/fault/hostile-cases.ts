/**
 * The hostile requests of the fault probe, each with the answers the spec allows (spec 1 §Errors,
 * DECISIONS §4 error table, issue 17): malformed JSON, wrong types, sizes, nesting, images, auth headers,
 * content types, methods and paths. Each generic case runs on both wires. `PROVIDER` marks a request
 * that only the provider can judge: the gateway may forward it (the fake accepts it: 200) or refuse it
 * itself, and a real provider's refusal is `400 upstream_invalid_request`.
 */
import type { ProbeRequest } from './answers.ts';

/** The error-body shape an answer must have: the path's provider shape, the service body, or any (`http`). */
export type BodyShape = 'openai' | 'anthropic' | 'service' | 'http';

export interface HostileCase {
  name: string;
  shape: BodyShape;
  request: ProbeRequest;
  /** Allowed answers: `200`, or `<status> <code>`. */
  expect: string[];
}

const BAD = ['400 invalid_request'];
const OK_OR_BAD = ['200', '400 invalid_request'];
const PROVIDER = ['200', '400 invalid_request', '400 upstream_invalid_request'];
/** A prompt or output no candidate model can hold is refused by routing (`context_too_small`). */
const FITS = ['200', '503 routing_failed'];
const MiB = 1024 * 1024;

export const OPENAI_MODEL = 'openai:gpt-5-mini';
export const ANTHROPIC_MODEL = 'anthropic:claude-haiku-4-5';

/** Every case for a gateway whose key is `token` and whose body limit is `maxBodyBytes`. */
export function hostileCases(token: string, maxBodyBytes: number): HostileCase[] {
  return [
    ...wireCases('openai', token, maxBodyBytes),
    ...wireCases('anthropic', token, maxBodyBytes),
    ...crossCases(token),
    ...routeCases(token),
  ];
}

// --- internal ---

type Wire = 'openai' | 'anthropic';
type Body = Record<string, unknown>;

function base(wire: Wire): Body {
  return wire === 'openai'
    ? { model: OPENAI_MODEL, max_completion_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }
    : { model: ANTHROPIC_MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
}

function headersOf(wire: Wire, token: string | undefined): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json' };
  if (wire === 'anthropic') h['anthropic-version'] = '2023-06-01';
  if (token !== undefined) {
    if (wire === 'openai') h.authorization = `Bearer ${token}`;
    else h['x-api-key'] = token;
  }
  return h;
}

function req(
  wire: Wire,
  token: string | undefined,
  body: Body | string | Buffer,
  headers: Record<string, string | string[]> | string[] = headersOf(wire, token),
): ProbeRequest {
  const path = wire === 'openai' ? '/v1/chat/completions' : '/v1/messages';
  const text = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  return { method: 'POST', path, headers, body: text };
}

function wireCases(wire: Wire, token: string, maxBodyBytes: number): HostileCase[] {
  const b = base(wire);
  const text = JSON.stringify(b);
  const c = (
    name: string,
    body: Body | string | Buffer,
    expect: string[],
    headers?: ProbeRequest['headers'],
  ) => ({
    name,
    shape: wire,
    request: req(wire, token, body, headers),
    expect,
  });
  const maxKey = wire === 'openai' ? 'max_completion_tokens' : 'max_tokens';
  const msg = (m: unknown) => ({ ...b, messages: [m] });
  const h = headersOf(wire, undefined);
  const auth = (value: string | string[]) => ({ ...h, authorization: value });
  return [
    // not JSON, or not an object
    c('empty body', '', BAD),
    c('lone brace', '{', BAD),
    c('plain text', 'not json', BAD),
    c('JSON null', 'null', BAD),
    c('JSON array', '[]', BAD),
    c('JSON string', '"hi"', BAD),
    c('JSON number', '123', BAD),
    c('truncated object', text.slice(0, -1), BAD),
    c('trailing comma', `${text.slice(0, -1)},}`, BAD),
    c('NaN literal', text.replace('16', 'NaN'), BAD),
    c('single quotes', text.replaceAll('"', "'"), BAD),
    c('byte-order mark before JSON', `\ufeff${text}`, OK_OR_BAD),
    c('duplicate model key', `{"model":"x",${text.slice(1)}`, OK_OR_BAD),
    c('lone surrogate escape in content', text.replace('"hi"', '"\\ud800"'), PROVIDER),
    c(
      'invalid UTF-8 inside a string',
      Buffer.concat([
        Buffer.from(text.replace('"hi"', '"h')),
        Buffer.from([0xff, 0x22]),
        Buffer.from(text.slice(text.indexOf('"hi"') + 4)),
      ]),
      PROVIDER,
    ),
    c('invalid UTF-8 outside strings', Buffer.concat([Buffer.from([0xff]), Buffer.from(text)]), BAD),
    // model
    c('model is a number', { ...b, model: 42 }, BAD),
    c('model is null', { ...b, model: null }, BAD),
    c('model is empty', { ...b, model: '' }, BAD),
    c('model is an array', { ...b, model: [OPENAI_MODEL] }, BAD),
    c('model missing', { ...b, model: undefined }, BAD),
    c('model of 64 KiB', { ...b, model: 'm'.repeat(64 * 1024) }, BAD),
    c('model of 8 MiB', { ...b, model: 'm'.repeat(8 * MiB) }, BAD),
    // messages
    c('messages is a string', { ...b, messages: 'hi' }, BAD),
    c('messages is an object', { ...b, messages: { role: 'user' } }, BAD),
    c('messages is empty', { ...b, messages: [] }, wire === 'openai' ? BAD : PROVIDER),
    c('message is a number', { ...b, messages: [1] }, BAD),
    c('unknown role', msg({ role: 'robot', content: 'hi' }), BAD),
    c('content is a number', msg({ role: 'user', content: 42 }), BAD),
    c('text part without text', msg({ role: 'user', content: [{ type: 'text' }] }), BAD),
    c(
      '10,000 messages',
      { ...b, messages: Array.from({ length: 10_000 }, () => ({ role: 'user', content: 'hi' })) },
      ['200'],
    ),
    c('256 KiB of content', msg({ role: 'user', content: 'word '.repeat((256 * 1024) / 5) }), FITS),
    c(
      '8 MiB of content (over every context window)',
      msg({ role: 'user', content: 'word '.repeat((8 * MiB) / 5) }),
      FITS,
    ),
    // numbers and flags
    c('negative max tokens', { ...b, [maxKey]: -1 }, BAD),
    c('max tokens is a string', { ...b, [maxKey]: '16' }, BAD),
    c('max tokens is 1.5', { ...b, [maxKey]: 1.5 }, BAD),
    c('max tokens of 10^12', { ...b, [maxKey]: 1e12 }, [...PROVIDER, ...FITS]),
    c('stream is "yes"', { ...b, stream: 'yes' }, BAD),
    c('stream is 1', { ...b, stream: 1 }, BAD),
    c('temperature is a string', { ...b, temperature: 'hot' }, BAD),
    c('tools is an object', { ...b, tools: {} }, BAD),
    c('tool without a name', { ...b, tools: [{}] }, BAD),
    c('tool_choice is a number', { ...b, tool_choice: 42 }, BAD),
    // unknown fields and prototype keys travel to the provider
    c('unknown field', { ...b, frobnicate: 1 }, PROVIDER),
    c('unknown field of 1 MiB', { ...b, frobnicate: 'x'.repeat(MiB) }, PROVIDER),
    c('__proto__ key', `{"__proto__":{"admin":true},${text.slice(1)}`, PROVIDER),
    c('constructor key', `{"constructor":{"prototype":{"x":1}},${text.slice(1)}`, PROVIDER),
    // nesting
    c('unknown field nested 5,000 objects deep', withField(b, 'deep', nestedObjects(5000)), PROVIDER),
    c('unknown field nested 100,000 arrays deep', withField(b, 'deep', nestedArrays(100_000)), PROVIDER),
    c(
      'tool schema nested 5,000 deep',
      withField(b, 'tools', `[${toolJson(wire, nestedObjects(5000))}]`),
      PROVIDER,
    ),
    c(
      'tool schema nested 100,000 deep',
      withField(b, 'tools', `[${toolJson(wire, nestedObjects(100_000))}]`),
      PROVIDER,
    ),
    // images
    ...imageCases(wire).map(([name, m, expect]) => c(name, msg(m), expect)),
    // content types
    c('no content-type', text, OK_OR_BAD, withoutType(headersOf(wire, token))),
    c('content-type text/plain', text, OK_OR_BAD, {
      ...headersOf(wire, token),
      'content-type': 'text/plain',
    }),
    c('form-encoded body', 'model=x&messages=y', BAD, {
      ...headersOf(wire, token),
      'content-type': 'application/x-www-form-urlencoded',
    }),
    c('multipart body', '--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nx\r\n--b--\r\n', BAD, {
      ...headersOf(wire, token),
      'content-type': 'multipart/form-data; boundary=b',
    }),
    // sizes
    c('body 1 byte over the limit', Buffer.alloc(maxBodyBytes + 1, 0x20), ['413 request_too_large']),
    c('body 2 MiB over the limit', Buffer.alloc(maxBodyBytes + 2 * MiB, 0x20), ['413 request_too_large']),
    // authentication (checked before the body)
    c('no token', text, ['401 missing_token'], h),
    c('no token and a broken body', '{', ['401 missing_token'], h),
    c('unknown token', text, ['401 invalid_token'], auth('Bearer gw_01NOTAKEY0000000000000000')),
    c('Bearer with two words', text, ['401 invalid_token'], auth(`Bearer ${token} extra`)),
    c('Basic credentials', text, ['401 invalid_token'], auth('Basic dXNlcjpwYXNzd29yZA==')),
    c('Bearer without a token', text, ['401 missing_token', '401 invalid_token'], auth('Bearer ')),
    c(
      'two Authorization headers',
      text,
      ['401 invalid_token'],
      auth([`Bearer ${token}`, 'Bearer gw_01NOTAKEY0000000000000000']),
    ),
    c('token of 4 KiB', text, ['401 invalid_token'], auth(`Bearer gw_${'x'.repeat(4 * 1024)}`)),
    {
      // Node refuses a header block over 16 KiB before the app sees it: the service error body (listen.ts)
      ...c(
        'token of 16 KiB',
        text,
        ['401 invalid_token', '431 request_headers_too_large'],
        auth(`Bearer gw_${'x'.repeat(16 * 1024)}`),
      ),
      shape: 'http' as const,
    },
    c('lower-case bearer scheme', text, ['200'], auth(`bearer ${token}`)),
    c('empty x-api-key, no Authorization', text, ['401 missing_token'], { ...h, 'x-api-key': '' }),
    c('unknown x-api-key beside a valid Bearer', text, ['401 invalid_token'], {
      ...h,
      'x-api-key': 'gw_01NOTAKEY0000000000000000',
      authorization: `Bearer ${token}`,
    }),
    // DNS-rebinding protection
    c('foreign Host', text, ['403 host_not_allowed'], { ...headersOf(wire, token), host: 'evil.example' }),
    c('foreign Origin', text, ['403 origin_not_allowed'], {
      ...headersOf(wire, token),
      origin: 'https://evil.example',
    }),
    c('Origin null', text, ['403 origin_not_allowed'], { ...headersOf(wire, token), origin: 'null' }),
  ];
}

function imageCases(wire: Wire): Array<[string, unknown, string[]]> {
  if (wire === 'openai') {
    const part = (image_url: unknown) => ({
      role: 'user',
      content: [
        { type: 'text', text: 'what is it' },
        { type: 'image_url', image_url },
      ],
    });
    return [
      ['image data not base64', part({ url: 'data:image/png;base64,!!!not-base64!!!' }), PROVIDER],
      ['image data URL without data', part({ url: 'data:' }), PROVIDER],
      ['image URL with file scheme', part({ url: 'file:///etc/passwd' }), PROVIDER],
      ['image URL is a number', part({ url: 42 }), BAD],
      ['image_url is a string', { role: 'user', content: [{ type: 'image_url', image_url: 'x' }] }, BAD],
      [
        'image of 4 MiB random bytes',
        part({ url: `data:image/png;base64,${randomBase64(4 * MiB)}` }),
        PROVIDER,
      ],
    ];
  }
  const block = (source: unknown) => ({
    role: 'user',
    content: [
      { type: 'text', text: 'what is it' },
      { type: 'image', source },
    ],
  });
  return [
    [
      'image data not base64',
      block({ type: 'base64', media_type: 'image/png', data: '!!!not-base64!!!' }),
      PROVIDER,
    ],
    [
      'image media type text/html',
      block({ type: 'base64', media_type: 'text/html', data: 'PGI+aGk8L2I+' }),
      PROVIDER,
    ],
    ['image source type file', block({ type: 'file', file_id: '../../etc/passwd' }), PROVIDER],
    ['image source is a string', { role: 'user', content: [{ type: 'image', source: 'x' }] }, BAD],
    ['image data is a number', block({ type: 'base64', media_type: 'image/png', data: 42 }), BAD],
    [
      'image of 4 MiB random bytes',
      block({ type: 'base64', media_type: 'image/png', data: randomBase64(4 * MiB) }),
      PROVIDER,
    ],
  ];
}

/** Anthropic wire to an OpenAI model: the gateway translates, so it walks every block itself. */
function crossCases(token: string): HostileCase[] {
  const b = { ...base('anthropic'), model: OPENAI_MODEL };
  const toolUse = (input: string) =>
    `[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"t","input":${input}}]},` +
    '{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}]';
  const c = (name: string, body: string, expect: string[]) => ({
    name: `translated: ${name}`,
    shape: 'anthropic' as const,
    request: req('anthropic', token, body),
    expect,
  });
  return [
    c('tool_use input nested 5,000 deep', withField(b, 'messages', toolUse(nestedObjects(5000))), PROVIDER),
    c(
      'tool_use input nested 100,000 deep',
      withField(b, 'messages', toolUse(nestedObjects(100_000))),
      PROVIDER,
    ),
    c(
      'tool schema nested 5,000 deep',
      withField(b, 'tools', `[${toolJson('anthropic', nestedObjects(5000))}]`),
      PROVIDER,
    ),
    c('image data not base64', JSON.stringify({ ...b, messages: [imageCases('anthropic')[0][1]] }), PROVIDER),
    c('tool_use input is a string', withField(b, 'messages', toolUse('"x"')), BAD),
    c(
      'tool_result for an unknown id',
      withField(
        b,
        'messages',
        '[{"role":"user","content":[{"type":"tool_result","tool_use_id":"nope","content":"x"}]}]',
      ),
      PROVIDER,
    ),
  ];
}

function routeCases(token: string): HostileCase[] {
  const oa = { headers: headersOf('openai', token), body: JSON.stringify(base('openai')) };
  const an = { headers: headersOf('anthropic', token), body: JSON.stringify(base('anthropic')) };
  const r = (
    name: string,
    method: string,
    path: string,
    shape: BodyShape,
    w: typeof oa,
    expect: string[],
  ) => ({
    name,
    shape,
    request: { method, path, headers: w.headers, body: method === 'GET' ? undefined : w.body },
    expect,
  });
  return [
    // a provider path with another method: 405 in that provider's error shape, with Allow (issue 13)
    r('GET on the chat path', 'GET', '/v1/chat/completions', 'openai', oa, ['405 method_not_allowed']),
    r('PUT on the messages path', 'PUT', '/v1/messages', 'anthropic', an, ['405 method_not_allowed']),
    r('trailing slash', 'POST', '/v1/chat/completions/', 'service', oa, ['404 not_found']),
    r('analytics path', 'GET', '/analytics/spend', 'service', oa, ['404 not_found']),
    r('dot segments in the path', 'POST', '/v1/x/../chat/completions', 'openai', oa, [
      '200',
      '404 not_found',
    ]),
    r('messages with ?beta=true', 'POST', '/v1/messages?beta=true', 'anthropic', an, ['200']),
  ];
}

/** `body` with field `name` set to the raw JSON `valueText` (too deep for JSON.stringify to build). */
function withField(body: Body, name: string, valueText: string): string {
  return JSON.stringify({ ...body, [name]: PLACEHOLDER }).replace(`"${PLACEHOLDER}"`, () => valueText);
}

const PLACEHOLDER = '@@value@@';

function toolJson(wire: Wire, schema: string): string {
  const parameters = `{"type":"object","properties":{"a":${schema}}}`;
  return wire === 'openai'
    ? `{"type":"function","function":{"name":"t","parameters":${parameters}}}`
    : `{"name":"t","input_schema":${parameters}}`;
}

function nestedObjects(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

function nestedArrays(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

function withoutType(h: Record<string, string>): Record<string, string> {
  const { 'content-type': _, ...rest } = h;
  return rest;
}

function randomBase64(bytes: number): string {
  let x = 0x2545f491;
  const buf = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    buf[i] = x & 0xff;
  }
  return buf.toString('base64');
}
