/**
 * The content parts OpenAI takes, by type, and its 400 for a part of another type: code `invalid_value`, the
 * part's `type` as `param` (`messages[0].content[1].type`, `input[0].content[1].type`), and the message
 * "Invalid value: 'image'. Supported values are: …" listing the types the API's schema allows there (the
 * lists and wording as the API answers them: openai/openai-dotnet#396 for Chat Completions, which added
 * `file` since; MervinPraison/PraisonAI#3934 and langchain-ai/langchainjs#11248 for Responses). Chat
 * Completions parts are `text`, `image_url`, `input_audio`, `file` (user) and `refusal` (assistant); a
 * Responses message's are `input_text`, `input_image`, `input_file` (`output_text` / `refusal` for an
 * assistant), and a `function_call_output` / `custom_tool_call_output` holds a string or an array of
 * `input_text`, `input_image` and `input_file` parts.
 */

import type { BodyRefusal } from './responses.ts';

const CHAT_PARTS = ['text', 'image_url', 'input_audio', 'refusal', 'audio', 'file'];
const RESPONSES_PARTS = [
  'input_text',
  'input_image',
  'input_audio',
  'output_text',
  'refusal',
  'input_file',
  'computer_screenshot',
  'summary_text',
  'encrypted_content',
];
const TOOL_OUTPUT_PARTS = ['input_text', 'input_image', 'input_file'];
const TOOL_OUTPUTS = ['function_call_output', 'custom_tool_call_output'];

type Obj = Record<string, unknown>;

/** A Chat Completions message's content part of a type the API has no schema for. */
export function chatPartRefusal(body: Obj): BodyRefusal | undefined {
  const messages = Array.isArray(body.messages) ? (body.messages as Obj[]) : [];
  for (const [i, m] of messages.entries()) {
    const refused = partsRefusal(m?.content, `messages[${i}].content`, CHAT_PARTS);
    if (refused) return refused;
  }
  return undefined;
}

/** A Responses message's content part, or a tool output's part, of a type the API refuses there. */
export function responsesPartRefusal(body: Obj): BodyRefusal | undefined {
  const input = Array.isArray(body.input) ? (body.input as Obj[]) : [];
  for (const [i, item] of input.entries()) {
    if (item === null || typeof item !== 'object') continue;
    const refused = TOOL_OUTPUTS.includes(String(item.type))
      ? outputRefusal(item.output, `input[${i}].output`)
      : item.type === 'message' || (item.type === undefined && 'role' in item)
        ? partsRefusal(item.content, `input[${i}].content`, RESPONSES_PARTS)
        : undefined;
    if (refused) return refused;
  }
  return undefined;
}

// --- internal ---

function outputRefusal(output: unknown, at: string): BodyRefusal | undefined {
  if (typeof output === 'string') return undefined;
  if (!Array.isArray(output))
    return {
      message: `Invalid type for '${at}': expected one of a string or an array of input content parts, but got ${output === null ? 'null' : typeof output} instead.`,
      param: at,
      code: 'invalid_type',
    };
  return partsRefusal(output, at, TOOL_OUTPUT_PARTS);
}

function partsRefusal(content: unknown, at: string, allowed: string[]): BodyRefusal | undefined {
  if (!Array.isArray(content)) return undefined;
  for (const [j, part] of content.entries()) {
    const type = (part as Obj | null)?.type;
    if (typeof type === 'string' && allowed.includes(type)) continue;
    return {
      message: `Invalid value: '${String(type)}'. Supported values are: ${listed(allowed)}.`,
      param: `${at}[${j}].type`,
      code: 'invalid_value',
    };
  }
  return undefined;
}

/** `'a', 'b', and 'c'` as the API lists allowed values. */
function listed(values: string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  if (quoted.length < 3) return quoted.join(' and ');
  return `${quoted.slice(0, -1).join(', ')}, and ${quoted.at(-1)}`;
}
