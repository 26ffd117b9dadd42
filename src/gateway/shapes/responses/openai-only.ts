/**
 * @module Which part of a Responses request only an OpenAI model can serve: state OpenAI stored
 * (`previous_response_id`, `conversation`, `prompt`, `item_reference`), what the answer would silently lack
 * (`background`, log probabilities), and input items, content parts, tool choices and tools only the
 * Responses API knows. The pipeline refuses such a request to any other adapter with a 400 naming the part.
 */
import type { AdapterName } from '../../../adapters/names.ts';
import { forcedSearchRefusal, isWebSearchChoice } from '../web-search.ts';
import { inlinePdf } from './decode.ts';
import { isDroppableHostedTool } from './namespaces.ts';
import { replaysToolLists } from './replayed-tool-lists.ts';

/** A part of a Responses request that only an OpenAI model can serve, and why. */
export interface OpenAIOnlyPart {
  /** The field path, e.g. `previous_response_id`, `input.0`, `tools.2`. */
  param: string;
  what: string;
  /** What works instead. */
  instead: string;
  /** Which models can serve it, when others than OpenAI's can too (a forced web search: Claude's). */
  by?: string;
}

const TRANSLATED_ITEMS: ReadonlySet<string> = new Set([
  'message',
  'function_call',
  'function_call_output',
  // a custom tool's call replayed (Codex's code-mode exec on its default model): a call with {input: <text>}
  'custom_tool_call',
  'custom_tool_call_output',
  'reasoning',
  'web_search_call', // left out (decodeInput)
]);

const STORED =
  'this gateway keeps its own answers on other models only in memory until it restarts; send the whole conversation as input items (with store: false), or use an OpenAI model';

/**
 * The first part of `body` (a validated Responses request) that needs OpenAI itself: state OpenAI stored
 * (`previous_response_id`, `item_reference`), input items and tools only the Responses API knows (Codex's
 * `additional_tools` where it gives the request's tools, hosted and custom tools), a forced web search `adapter`
 * cannot run. Null when the request translates whole (replayed-tool-lists.ts leaves a replayed tool list out).
 */
export function findOpenAIOnlyPart(
  body: Record<string, unknown>,
  adapter?: AdapterName,
): OpenAIOnlyPart | null {
  const previous = body.previous_response_id;
  if (typeof previous === 'string' && previous !== '')
    return {
      param: 'previous_response_id',
      what: 'a response stored by OpenAI or no longer kept by this gateway',
      instead: STORED,
    };
  if (body.conversation != null)
    return { param: 'conversation', what: 'a conversation stored by OpenAI', instead: STORED };
  if (body.prompt != null)
    return {
      param: 'prompt',
      what: 'a prompt template stored by OpenAI',
      instead: 'send instructions and input instead, or use an OpenAI model',
    };
  // an answer without what these ask for would be a silent wrong answer (README §Translation)
  if (body.background === true)
    return {
      param: 'background',
      what: 'a background response (answered later, polled by id)',
      instead: 'leave background out (the answer comes in this request), or use an OpenAI model',
    };
  if (typeof body.top_logprobs === 'number' && body.top_logprobs > 0)
    return {
      param: 'top_logprobs',
      what: 'log probabilities, which this model does not return',
      instead: 'leave top_logprobs out, or use an OpenAI model',
    };
  const include = Array.isArray(body.include) ? body.include : [];
  const logprobs = include.indexOf('message.output_text.logprobs');
  if (logprobs >= 0)
    return {
      param: `include.${logprobs}`,
      what: 'log probabilities, which this model does not return',
      instead: 'leave message.output_text.logprobs out of include, or use an OpenAI model',
    };
  const choice = body.tool_choice as { type?: unknown } | string | undefined;
  if (isWebSearchChoice(choice)) {
    const refused = forcedSearchRefusal(body, adapter);
    if (refused) return { param: 'tool_choice', ...refused };
  } else if (
    typeof choice === 'object' &&
    choice !== null &&
    !TRANSLATED_TOOL_CHOICES.has(String(choice.type))
  )
    return {
      param: 'tool_choice',
      what: `a tool_choice of type ${String(choice.type)}`,
      instead: 'choose a function tool (or auto, none, required), or use an OpenAI model',
    };
  const input = Array.isArray(body.input) ? (body.input as Array<Record<string, unknown>>) : [];
  for (const [i, item] of input.entries()) {
    const type = typeof item?.type === 'string' ? item.type : 'message';
    if (type === 'item_reference')
      return {
        param: `input.${i}`,
        what: 'an item_reference to an item stored by OpenAI or no longer kept by this gateway',
        instead: STORED,
      };
    // a tool list replayed from a turn on Codex's default model, beside the tools of this one: left out
    if (type === 'additional_tools' && replaysToolLists(body)) continue;
    if (!TRANSLATED_ITEMS.has(type))
      return {
        param: `input.${i}`,
        what: `an input item of type ${type}`,
        instead: 'leave it out, or use an OpenAI model',
      };
    const field = type === 'message' ? 'content' : type.endsWith('_call_output') ? 'output' : null;
    const part = field ? findOpenAIOnlyContent(item[field]) : -1;
    if (field && part >= 0) {
      const p = (item[field] as Array<{ type?: unknown }>)[part]!;
      return {
        param: `input.${i}.${field}.${part}`,
        what:
          p.type === 'input_image'
            ? 'an input_image given by file_id'
            : `a content part of type ${String(p.type)}`,
        instead:
          'send text, or an image as an input_image whose image_url is an https or data URL, or use an OpenAI model',
      };
    }
  }
  const tools = Array.isArray(body.tools) ? (body.tools as Array<Record<string, unknown>>) : [];
  const instead = 'declare function tools only, or use an OpenAI model';
  for (const [i, tool] of tools.entries()) {
    if (tool?.type === 'function' || isDroppableHostedTool(tool?.type)) continue;
    if (tool?.type === 'namespace' && Array.isArray(tool.tools)) {
      // a namespace of functions is flattened (namespaces.ts); one holding another kind of tool is not
      const members = tool.tools as Array<Record<string, unknown>>;
      const j = members.findIndex((m) => m?.type !== 'function');
      if (j < 0) continue;
      return { param: `tools.${i}.tools.${j}`, what: `a tool of type ${String(members[j]?.type)}`, instead };
    }
    return { param: `tools.${i}`, what: `a tool of type ${String(tool?.type)}`, instead };
  }
  return null;
}

/** tool_choice objects every adapter translates (strings always are). */
const TRANSLATED_TOOL_CHOICES: ReadonlySet<string> = new Set(['function', 'allowed_tools']);

/** Index of the first content part only OpenAI can read (files by id or URL; images by file_id), or -1. */
function findOpenAIOnlyContent(content: unknown): number {
  if (!Array.isArray(content)) return -1;
  return content.findIndex((p: { type?: unknown; image_url?: unknown }) => {
    if (p?.type === 'input_image') return typeof p.image_url !== 'string' || p.image_url === '';
    if (p?.type === 'input_file') return inlinePdf(p) === null;
    return p?.type !== 'input_text' && p?.type !== 'output_text' && p?.type !== 'refusal';
  });
}
