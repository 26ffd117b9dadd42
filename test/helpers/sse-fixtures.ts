/**
 * Upstream SSE fixtures (wire-formats §1.10, §2.7) with multi-byte characters, and helpers to split them at
 * every byte boundary and to drain async iterables.
 */

export const ANTHROPIC_TOOL_STREAM = [
  'event: message_start',
  'data: {"type":"message_start","message":{"id":"msg_01Ab","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":40,"cache_creation_input_tokens":7,"cache_read_input_tokens":1200,"output_tokens":1}}}',
  '',
  'event: content_block_start',
  'data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user wants ☃"}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}',
  '',
  'event: content_block_stop',
  'data: {"type":"content_block_stop","index":0}',
  '',
  'event: content_block_start',
  'data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}',
  '',
  'event: ping',
  'data: {"type":"ping"}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Checking é "}}',
  '',
  'event: content_block_stop',
  'data: {"type":"content_block_stop","index":1}',
  '',
  'event: content_block_start',
  'data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01X","name":"get_weather","input":{}}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\\"city\\": \\"Os"}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"lo\\"}"}}',
  '',
  'event: content_block_stop',
  'data: {"type":"content_block_stop","index":2}',
  '',
  'event: content_block_start',
  'data: {"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_02Y","name":"get_time","input":{}}}',
  '',
  'event: content_block_stop',
  'data: {"type":"content_block_stop","index":3}',
  '',
  'event: message_delta',
  'data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":31}}',
  '',
  'event: message_stop',
  'data: {"type":"message_stop"}',
  '',
  '',
].join('\n');

export const OPENAI_TOOL_STREAM = [
  ': OPENROUTER PROCESSING',
  '',
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763790000,"model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}',
  '',
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763790000,"model":"gpt-x","choices":[{"index":0,"delta":{"content":"Checking é ☃"},"logprobs":null,"finish_reason":null}],"usage":null}',
  '',
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763790000,"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a1","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}',
  '',
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763790000,"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"city\\":\\"Os"}}]},"logprobs":null,"finish_reason":null}],"usage":null}',
  '',
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763790000,"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"lo\\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}',
  '',
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763790000,"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b2","type":"function","function":{"name":"get_time","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}',
  '',
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763790000,"model":"gpt-x","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}',
  '',
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763790000,"model":"gpt-x","choices":[],"usage":{"prompt_tokens":2100,"completion_tokens":40,"total_tokens":2140,"prompt_tokens_details":{"cached_tokens":2048},"completion_tokens_details":{"reasoning_tokens":5}}}',
  '',
  'data: [DONE]',
  '',
  '',
].join('\n');

export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

/** The same bytes as one chunk, then as two chunks split at every byte boundary. */
export function* everySplit(text: string): Generator<Uint8Array[]> {
  const bytes = utf8(text);
  yield [bytes];
  for (let i = 1; i < bytes.length; i++) yield [bytes.subarray(0, i), bytes.subarray(i)];
}

export async function* chunks(list: readonly Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const c of list) yield c;
}

export async function* items<T>(list: readonly T[]): AsyncGenerator<T> {
  for (const c of list) yield c;
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Parses SSE text into `{event, data}` pairs (test oracle, independent of lib/sse-decode). */
export function parseSseText(text: string): Array<{ event?: string; data: string }> {
  return text
    .split('\n\n')
    .filter((f) => f.trim() !== '')
    .map((f) => {
      const out: { event?: string; data: string } = { data: '' };
      for (const line of f.split('\n')) {
        if (line.startsWith('event: ')) out.event = line.slice(7);
        else if (line.startsWith('data: ')) out.data = line.slice(6);
      }
      return out;
    });
}
