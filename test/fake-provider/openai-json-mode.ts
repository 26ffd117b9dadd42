/**
 * OpenAI's JSON mode for the fake provider: `response_format: {type: "json_object"}` (Chat Completions) or
 * `text.format: {type: "json_object"}` (Responses) makes the answer a JSON object (outputSchemaOf), and the API refuses the request, 400 invalid_request_error, unless the word "json" (any case) is in the
 * messages: any message on Chat Completions ("'messages' must contain the word 'json' in some form, to use
 * 'response_format' of type 'json_object'.", param `messages`), the input messages on the Responses API,
 * where `instructions` does not count ("Response input messages must contain the word 'json' in some form to
 * use 'text.format' of type 'json_object'."). OpenRouter leaves the check to the model's own provider.
 */

import type { BodyRefusal } from './responses.ts';
import { jsonSchemaOf } from './responses.ts';

type Obj = Record<string, unknown>;

/**
 * What an OpenAI output format holds the answer to: its JSON schema (`json_schema`), or any JSON object in JSON
 * mode, whose unscripted answer is then `{}`.
 */
export function outputSchemaOf(format: unknown): unknown {
  if ((format as Obj | undefined)?.type === 'json_object') return { type: 'object' };
  return jsonSchemaOf(format);
}

/** Chat Completions' 400 for JSON mode asked of messages that never say "json". */
export function chatJsonModeRefusal(body: Obj): BodyRefusal | undefined {
  if ((body.response_format as Obj | undefined)?.type !== 'json_object') return undefined;
  const messages = Array.isArray(body.messages) ? (body.messages as Obj[]) : [];
  if (messages.some((m) => saysJson(m?.content))) return undefined;
  return {
    message:
      "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
    param: 'messages',
    code: null,
  };
}

/** The Responses API's 400 for JSON mode asked of input messages that never say "json". */
export function responsesJsonModeRefusal(body: Obj): BodyRefusal | undefined {
  const format = (body.text as Obj | undefined)?.format as Obj | undefined;
  if (format?.type !== 'json_object') return undefined;
  const input = typeof body.input === 'string' ? [{ content: body.input }] : body.input;
  const items = Array.isArray(input) ? (input as Obj[]) : [];
  if (items.some((i) => saysJson(i?.content))) return undefined;
  return {
    message:
      "Response input messages must contain the word 'json' in some form to use 'text.format' of type 'json_object'.",
    param: 'input',
    code: null,
  };
}

// --- internal ---

function saysJson(content: unknown): boolean {
  const parts = typeof content === 'string' ? [content] : Array.isArray(content) ? content : [];
  return parts.some((p) => /json/i.test(typeof p === 'string' ? p : String((p as Obj)?.text ?? '')));
}
