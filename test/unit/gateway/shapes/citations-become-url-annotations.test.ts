/**
 * A Claude answer's web citations reach OpenAI clients as `url_citation` annotations: before, Anthropic
 * `citations` on text blocks were dropped when the answer was encoded for Chat Completions or the Responses
 * API. A text block is the span it cites; a citation of a document (no URL) has no OpenAI form.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAnthropicAdapter } from '#src/adapters/registry.ts';
import { encodeOpenAIResponse } from '#src/gateway/shapes/openai/encode.ts';
import { encodeResponsesResponse } from '#src/gateway/shapes/responses/encode.ts';

const anthropic = createAnthropicAdapter({ baseUrl: 'https://a.test', apiKey: 'k' });

const WEB = {
  type: 'web_search_result_location',
  url: 'https://example.com/paris',
  title: 'Paris facts',
  encrypted_index: 'Eo8BCioIAhgB',
  cited_text: 'Paris is the capital of France.',
};
const DOCUMENT = {
  type: 'char_location',
  document_index: 0,
  document_title: 'notes',
  start_char_index: 0,
  end_char_index: 10,
  cited_text: 'some notes',
};

const answer = anthropic.decodeResponse({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    { type: 'text', text: 'Héllo. ' },
    { type: 'text', text: 'The capital is Paris.', citations: [WEB, DOCUMENT] },
  ],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 5 },
});

test('Chat Completions: a web citation is a url_citation over its block in the message text', () => {
  const message = (encodeOpenAIResponse(answer, { model: 'sonnet', created: 1 }) as any).choices[0].message;
  assert.equal(message.content, 'Héllo. The capital is Paris.');
  assert.deepEqual(message.annotations, [
    {
      type: 'url_citation',
      url_citation: { start_index: 7, end_index: 28, url: 'https://example.com/paris', title: 'Paris facts' },
    },
  ]);
  const [start, end] = [message.annotations[0].url_citation.start_index, 28];
  assert.equal([...message.content].slice(start, end).join(''), 'The capital is Paris.');
});

test('Responses API: a web citation is a url_citation on its output_text', () => {
  const res = encodeResponsesResponse(answer, { model: 'sonnet', idBase: 'r1', request: {} }) as any;
  const texts = res.output.map((item: any) => item.content[0]);
  assert.deepEqual(texts[0].annotations, []);
  assert.deepEqual(texts[1].annotations, [
    {
      type: 'url_citation',
      start_index: 0,
      end_index: 21,
      url: 'https://example.com/paris',
      title: 'Paris facts',
    },
  ]);
});
