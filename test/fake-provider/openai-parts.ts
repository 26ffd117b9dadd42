/**
 * The content parts OpenAI takes, by type, and its 400 for a part of another type: code `invalid_value`, the
 * part's `type` as `param` (`messages[0].content[1].type`, `input[0].content[1].type`), and the message
 * "Invalid value: 'image'. Supported values are: …" listing the types the API's schema allows there (the
 * lists and wording as the API answers them: openai/openai-dotnet#396 for Chat Completions, which added
 * `file` since; MervinPraison/PraisonAI#3934 and langchain-ai/langchainjs#11248 for Responses). Chat
 * Completions parts are `text`, `image_url`, `input_audio`, `file` (user) and `refusal` (assistant); a
 * Responses message's are `input_text`, `input_image`, `input_file` (`output_text` / `refusal` for an
 * assistant), and a `function_call_output` / `custom_tool_call_output` holds a string or an array of
 * `input_text`, `input_image` and `input_file` parts. Also the Responses API's pairing of tool calls and
 * their outputs in the input.
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

/**
 * A Responses tool call without its output, or an output answering no call, in the input: OpenAI's 400s "No
 * tool output found for function call call_1." and "No tool call found for function call output with call_id
 * call_1." (param `input`, code null; continuedev/continue#10092, router-for-me/CLIProxyAPI#2368). An output
 * may answer a call of the previous response, so with `previous_response_id` or an `item_reference` only a
 * call's missing output is refused.
 */
export function responsesToolPairRefusal(body: Obj): BodyRefusal | undefined {
  const input = Array.isArray(body.input) ? (body.input as Obj[]) : [];
  const calls = new Set<string>();
  const outputs = new Set<string>();
  for (const item of input) {
    if (item?.type === 'function_call' || item?.type === 'custom_tool_call') calls.add(String(item.call_id));
    if (TOOL_OUTPUTS.includes(String(item?.type))) outputs.add(String(item.call_id));
  }
  const refused = (message: string): BodyRefusal => ({ message, param: 'input', code: null });
  for (const id of calls)
    if (!outputs.has(id)) return refused(`No tool output found for function call ${id}.`);
  const earlier = body.previous_response_id != null || input.some((i) => i?.type === 'item_reference');
  if (!earlier)
    for (const id of outputs)
      if (!calls.has(id)) return refused(`No tool call found for function call output with call_id ${id}.`);
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
