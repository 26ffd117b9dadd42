/**
 * The Responses API's input read into a turn for the fake provider (openai-responses.ts): the last user turn's
 * text and tool outputs, the tools offered and the tool choice, the images of the whole input (message
 * parts and tool outputs alike).
 */

import { billedInputTokens } from './billing.ts';
import { isReasoningName } from './openai.ts';
import { outputSchemaOf } from './openai-json-mode.ts';
import type { Tool, Turn } from './responses.ts';

type Obj = Record<string, unknown>;

/** A `POST /v1/responses` body as the turn it asks about. */
export function readResponsesTurn(body: Obj): Turn {
  const input: Obj[] =
    typeof body.input === 'string'
      ? [{ role: 'user', content: body.input }]
      : Array.isArray(body.input)
        ? (body.input as Obj[])
        : [];
  const lastAssistant = input.findLastIndex(
    (i) =>
      i.role === 'assistant' ||
      i.type === 'function_call' ||
      i.type === 'custom_tool_call' ||
      i.type === 'reasoning',
  );
  const texts: string[] = [];
  const toolResults: string[] = [];
  for (const item of input.slice(lastAssistant + 1)) {
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
      const text = typeof item.output === 'string' ? item.output : textOf(item.output);
      toolResults.push(text);
      texts.push(text);
    } else if (item.role === 'user') texts.push(textOf(item.content));
  }
  const tools = Array.isArray(body.tools) ? (body.tools as Obj[]) : [];
  // Codex's default request gives its tools in an additional_tools input item instead of tools
  const listed = input.filter((i) => i.type === 'additional_tools' && Array.isArray(i.tools));
  const choice = body.tool_choice as string | Obj | undefined;
  const reasoning = body.reasoning as { effort?: string; summary?: string } | undefined;
  return {
    model: String(body.model),
    stream: body.stream === true,
    includeUsage: true,
    turnText: texts.join('\n'),
    // a custom tool (type custom: free-text input, e.g. Codex's apply_patch) is called with text
    tools: [...tools, ...listed.flatMap((i) => i.tools as Obj[])].flatMap((t) => callable(t)),
    toolResults,
    // an image in a message or in a tool's output (function_call_output holds input_image parts too)
    images: input.flatMap((i) =>
      [...partsOf(i.content), ...(Array.isArray(i.output) ? (i.output as Obj[]) : [])]
        .filter((p) => p?.type === 'input_image')
        .map(imageOf),
    ),
    forcedTool:
      choice === 'required'
        ? true
        : typeof choice === 'object' && (choice?.type === 'function' || choice?.type === 'custom')
          ? String(choice.name)
          : undefined,
    toolChoiceNone: choice === 'none',
    singleToolCall: body.parallel_tool_calls === false,
    // an effort asks for reasoning; so does a summary from a reasoning model, which reasons by default
    thinkingRequested:
      reasoning?.effort === undefined
        ? reasoning?.summary != null && isReasoningName(String(body.model))
        : reasoning.effort !== 'none',
    inputTokens: billedInputTokens('openai_responses', body),
    outputSchema: outputSchemaOf((body.text as { format?: unknown } | undefined)?.format),
    // the hosted tool: web_search, web_search_preview and their dated versions
    webSearchTool: tools.some((t) => typeof t.type === 'string' && t.type.startsWith('web_search')),
  };
}

/** The tools `t` offers: itself (a function or custom tool), a namespace's members named with it. */
function callable(t: Obj, namespace?: string): Tool[] {
  if (t.type === 'namespace' && Array.isArray(t.tools) && typeof t.name === 'string')
    return (t.tools as Obj[]).flatMap((m) => callable(m, t.name as string));
  if ((t.type !== 'function' && t.type !== 'custom') || typeof t.name !== 'string') return [];
  return [
    { name: t.name, schema: t.parameters, custom: t.type === 'custom', ...(namespace ? { namespace } : {}) },
  ];
}

function partsOf(content: unknown): Obj[] {
  if (typeof content === 'string') return [{ type: 'input_text', text: content }];
  return Array.isArray(content) ? (content as Obj[]) : [];
}

function textOf(content: unknown): string {
  return partsOf(content)
    .filter((p) => typeof p.text === 'string')
    .map((p) => p.text)
    .join('');
}

function imageOf(part: Obj): string {
  const url = typeof part.image_url === 'string' ? part.image_url : '';
  const data = /^data:([^;,]+)[;,]/.exec(url);
  return data ? data[1] : 'url';
}
