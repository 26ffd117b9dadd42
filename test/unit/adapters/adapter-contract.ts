/**
 * Contract every adapter satisfies (like hono's router common.case tests): request building with the
 * configured key, the same-shape fast path, response and stream decoding (split at every byte), the
 * passthrough tap, partial usage on cancellation, truncation and in-stream errors, failure classification.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Adapter } from '#src/adapters/adapter.ts';
import type { CanonicalRequest } from '#src/canonical/request.ts';
import type { CanonicalUsage } from '#src/canonical/response.ts';
import type { CanonicalStreamEvent } from '#src/canonical/stream.ts';
import { SvcError } from '#src/lib/errors.ts';
import { decodeSse } from '#src/lib/sse-decode.ts';
import { chunks, collect, everySplit, utf8 } from '../../helpers/sse-fixtures.ts';

export interface AdapterCase {
  name: string;
  adapter: Adapter;
  apiKey: string;
  /** URL the adapter must post to. */
  url: string;
  authHeader: [string, string];
  /** A complete upstream stream with text and two tool calls. */
  stream: string;
  streamUsage: CanonicalUsage;
  /** An upstream non-streaming JSON body with text and one tool call. */
  response: unknown;
  responseUsage: CanonicalUsage;
  /** An in-stream error frame and the class it must map to. */
  streamError: { frame: string; error_class: string };
  /** Error body for `type`-less classification checks. */
  errorBody: (message: string) => string;
  /** A client body in this adapter's wire for the fast path. */
  passthroughBody: string;
}

const REQUEST: CanonicalRequest = {
  model: 'alias',
  system: [{ type: 'text', text: 'Be brief.' }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] }],
  max_tokens: 100,
  stream: true,
  include_usage: false,
};

const header = (h: Record<string, string>) => (name: string) => h[name];

/** An SvcError upstream_error of class server_error (a provider answer that is not one). */
function isServerError(err: unknown): boolean {
  assert.ok(err instanceof SvcError, `not an SvcError: ${err}`);
  assert.equal(err.code, 'upstream_error');
  assert.equal(err.details?.error_class, 'server_error');
  return true;
}

export function runAdapterContract(c: AdapterCase): void {
  const { adapter } = c;

  test(`${c.name}: requests go to the wire's path with the configured key, never a client credential`, () => {
    const call = adapter.encodeRequest(REQUEST, 'upstream-model');
    assert.equal(call.url, c.url);
    assert.equal(call.headers[c.authHeader[0]], c.authHeader[1]);
    const body = JSON.parse(call.body);
    assert.equal(body.model, 'upstream-model');
    assert.equal(body.stream, true);
    assert.ok(!call.body.includes('client-token'));
  });

  test(`${c.name}: the fast path replaces only the model and keeps unknown fields`, () => {
    const call = adapter.encodePassthrough({
      bodyText: c.passthroughBody,
      body: JSON.parse(c.passthroughBody),
      upstreamModel: 'up-1',
      stream: false,
      headers: {},
    });
    const sent = JSON.parse(call.body);
    const original = JSON.parse(c.passthroughBody);
    assert.deepEqual(sent, { ...original, model: 'up-1' });
    assert.equal(call.url, c.url);
  });

  test(`${c.name}: a non-streaming response decodes to text, a tool call, tool_use and split usage`, () => {
    const res = adapter.decodeResponse(c.response);
    assert.equal(res.stop_reason, 'tool_use');
    assert.deepEqual(
      res.content.filter((b) => b.type !== 'thinking').map((b) => b.type),
      ['text', 'tool_use'],
    );
    const tool = res.content.find((b) => b.type === 'tool_use');
    assert.deepEqual(tool?.type === 'tool_use' && tool.input, { city: 'Oslo' });
    assert.deepEqual(res.usage, c.responseUsage);
  });

  test(`${c.name}: the stream decodes to identical canonical events at every byte split`, async () => {
    let expected: CanonicalStreamEvent[] | undefined;
    for (const split of everySplit(c.stream)) {
      const events = await collect(adapter.decodeStream(decodeSse(chunks(split))));
      expected ??= events;
      assert.deepEqual(events, expected);
    }
    const done = expected!.at(-1)!;
    assert.equal(done.type, 'message.complete');
    assert.ok(done.type === 'message.complete');
    assert.equal(done.stop_reason, 'tool_use');
    assert.deepEqual(done.usage, c.streamUsage);
    const tools = done.final_content.filter((b) => b.type === 'tool_use');
    assert.deepEqual(
      tools.map((b) => b.type === 'tool_use' && [b.name, b.input]),
      [
        ['get_weather', { city: 'Oslo' }],
        ['get_time', {}],
      ],
    );
    const indices = expected!.flatMap((e) => ('content_block_index' in e ? [e.content_block_index] : []));
    assert.ok(indices.every((i) => i >= 0 && i < done.final_content.length));
  });

  test(`${c.name}: the tap yields the upstream bytes unchanged and observes the same events`, async () => {
    const seen: CanonicalStreamEvent[] = [];
    const split = [...everySplit(c.stream)][17];
    const tap = adapter.tapStream(chunks(split), { onEvent: (e) => seen.push(e) });
    const out = await collect(tap);
    assert.deepEqual(Buffer.concat(out), Buffer.from(utf8(c.stream)));
    assert.deepEqual(seen, await collect(adapter.decodeStream(decodeSse(chunks([utf8(c.stream)])))));
    assert.equal(tap.completed()?.type, 'message.complete');
    assert.deepEqual(tap.usage(), c.streamUsage);
    assert.equal(tap.error(), undefined);
  });

  test(`${c.name}: the tap in frame mode echoes the requested model`, async () => {
    const tap = adapter.tapStream(chunks([utf8(c.stream)]), { model: 'my-alias' });
    const text = Buffer.concat(await collect(tap)).toString();
    assert.ok(text.includes('"model":"my-alias"'));
    assert.ok(!/"model":"(claude-x|gpt-x)"/.test(text));
    assert.equal(tap.completed()?.type, 'message.complete');
  });

  test(`${c.name}: a stream cancelled midway still reports the usage seen so far`, async () => {
    const stream = adapter.decodeStream(decodeSse(chunks([utf8(c.stream)])));
    let n = 0;
    for await (const _ of stream) if (++n === 3) break;
    assert.ok(stream.messageId());
    assert.ok(stream.hasContent());
    const u = stream.usage();
    assert.equal(typeof u.input_tokens, 'number');
  });

  test(`${c.name}: a stream cut before its end raises upstream_error instead of a truncated success`, async () => {
    const cut = c.stream.slice(0, Math.floor(c.stream.length * 0.6));
    const cutAt = cut.lastIndexOf('\n\n') + 2;
    await assert.rejects(
      collect(adapter.decodeStream(decodeSse(chunks([utf8(cut.slice(0, cutAt))])))),
      (err: unknown) => {
        assert.ok(err instanceof SvcError);
        assert.equal(err.code, 'upstream_error');
        return true;
      },
    );
  });

  test(`${c.name}: a stream that ends cleanly without its terminal frame raises upstream_error`, async () => {
    const frames = c.stream.trimEnd().split('\n\n');
    const withoutTerminal = `${frames.slice(0, -1).join('\n\n')}\n\n`;
    await assert.rejects(
      collect(adapter.decodeStream(decodeSse(chunks([utf8(withoutTerminal)])))),
      isServerError,
    );
    const tap = adapter.tapStream(chunks([utf8(withoutTerminal)]));
    await collect(tap);
    assert.equal(tap.completed(), undefined);
    assert.ok(isServerError(tap.error()));
  });

  test(`${c.name}: a 200 body that is not the provider's response object raises upstream_error`, () => {
    const full = c.response as Record<string, unknown>;
    const content = 'choices' in full ? 'choices' : 'content';
    const { usage: _u, ...noUsage } = full;
    const { [content]: _c, ...noContent } = full;
    const bodies: unknown[] = [
      'oops',
      {},
      null,
      [],
      noUsage,
      noContent,
      { ...full, [content]: 'oops' },
      { ...full, usage: 'oops' },
      { ...full, usage: { ...(full.usage as object), [Object.keys(full.usage as object)[0]]: '12' } },
    ];
    for (const body of bodies)
      assert.throws(() => adapter.decodeResponse(body), isServerError, JSON.stringify(body));
    assert.throws(
      () => adapter.decodeResponse('oops'),
      (err: Error) => !err.message.includes('oops'),
    );
  });

  test(`${c.name}: an in-stream error frame raises a classified SvcError`, async () => {
    const head = c.stream.slice(0, c.stream.indexOf('\n\n') + 2);
    await assert.rejects(
      collect(adapter.decodeStream(decodeSse(chunks([utf8(head + c.streamError.frame)])))),
      (err: unknown) => {
        assert.ok(err instanceof SvcError);
        assert.equal(err.details?.error_class, c.streamError.error_class);
        return true;
      },
    );
  });

  test(`${c.name}: upstream statuses map to DECISIONS §3 classes and §4 codes with retry hints`, () => {
    const cases: Array<[number, Record<string, string>, string, string, boolean]> = [
      [429, { 'retry-after': '3' }, 'rate_limit', 'upstream_rate_limited', true],
      [529, {}, 'overloaded', 'upstream_overloaded', true],
      [503, {}, 'overloaded', 'upstream_overloaded', true],
      [500, {}, 'server_error', 'upstream_error', true],
      [504, {}, 'timeout', 'upstream_timeout', true],
      [401, {}, 'authentication', 'upstream_auth_failed', false],
      [403, {}, 'authentication', 'upstream_auth_failed', false],
      [402, {}, 'authentication', 'upstream_auth_failed', false],
      [400, {}, 'invalid_request', 'upstream_invalid_request', false],
      [404, {}, 'invalid_request', 'upstream_invalid_request', false],
    ];
    for (const [status, h, cls, code, retryable] of cases) {
      const f = adapter.classifyResponse(status, header(h), c.errorBody('boom'));
      assert.deepEqual([status, f.error_class, f.code, f.retryable], [status, cls, code, retryable]);
      if (cls === 'authentication') {
        // the provider's text about its own key (OpenAI quotes a masked fragment) never reaches clients
        assert.doesNotMatch(f.message, /boom/);
        const said =
          status === 402 ? 'out of credit or over its spend limit' : "refused the gateway's provider key";
        assert.match(f.message, new RegExp(`${said} \\(HTTP ${status}`));
      } else assert.equal(f.message, 'boom');
    }
    assert.equal(
      adapter.classifyResponse(429, header({ 'retry-after-ms': '1500', 'retry-after': '9' }), '')
        .retry_after_ms,
      1500,
    );
    assert.equal(
      adapter.classifyResponse(429, header({ 'retry-after': '2' }), 'not json').retry_after_ms,
      2000,
    );
  });

  test(`${c.name}: transport errors map to timeout, connection_error and cancelled`, () => {
    assert.equal(
      adapter.classifyNetworkError(Object.assign(new Error('t'), { code: 'UND_ERR_HEADERS_TIMEOUT' }))
        .error_class,
      'timeout',
    );
    assert.equal(
      adapter.classifyNetworkError(Object.assign(new Error('r'), { code: 'ECONNREFUSED' })).error_class,
      'connection_error',
    );
    const abort = new DOMException('aborted', 'AbortError');
    assert.equal(adapter.classifyNetworkError(abort).error_class, 'cancelled');
    assert.equal(adapter.classifyNetworkError(new Error('x')).code, 'upstream_error');
  });
}
