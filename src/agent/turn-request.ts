/**
 * @module The request a turn's model call sends: the session history prepared as a provider accepts it and
 * windowed to the routed model's context (sessions/history-window.ts), the system prompt and the offered
 * tools. Sizes are routing's own estimate and context check (routing/request-facts.ts, candidate.ts).
 */
import type { CanonicalMessage } from '../canonical/message.ts';
import type { CanonicalRequest } from '../canonical/request.ts';
import type { ModelEntry } from '../models/model-schema.ts';
import { fitsContext } from '../routing/candidate.ts';
import { describeRequest } from '../routing/request-facts.ts';
import { smallestWindow, windowHistory } from './sessions/history-window.ts';
import type { WorkspaceTool } from './tools/tool.ts';

export interface TurnRequestParts {
  tools: readonly WorkspaceTool[];
  system: string;
  /** Workers are never offered delegate. */
  worker: boolean;
}

/**
 * The request of one call with `messages` (prepared). With `model` (the ref the turn asked for and the
 * routed entry) it is the call's; without, the same request as routing estimates it before a model is chosen.
 */
export function buildTurnRequest(
  parts: TurnRequestParts,
  messages: CanonicalMessage[],
  model: { ref: string; entry: ModelEntry } | null,
): CanonicalRequest {
  return {
    model: model?.ref ?? '',
    system: [{ type: 'text', text: parts.system }],
    messages,
    tools: offeredTools(parts).map((t) => ({
      type: 'function',
      name: t.name,
      description: t.description,
      input_schema: t.input_schema,
    })),
    ...(model ? { max_tokens: model.entry.capabilities.max_output_tokens } : {}),
    stream: true,
    include_usage: true,
  };
}

/** The names of the tools a turn offers (routing's tool facts). */
export function offeredToolNames(parts: Pick<TurnRequestParts, 'tools' | 'worker'>): string[] {
  return offeredTools(parts).map((t) => t.name);
}

/**
 * The messages one call to `model` sends: the whole history when the request fits its context with the
 * call's max_tokens reserved, else the window that does (the oldest exchanges left out, with a note).
 */
export function historyForModel(
  parts: TurnRequestParts,
  history: CanonicalMessage[],
  model: ModelEntry,
): CanonicalMessage[] {
  const caps = model.capabilities;
  const fits = (view: CanonicalMessage[]) =>
    fitsContext(estimate(parts, prepareHistory(view)), caps.max_output_tokens, caps);
  return prepareHistory(windowHistory(history, fits));
}

/** The estimate of the smallest request the turn can send (RouteFacts.smallestInputTokens). */
export function smallestInputTokens(parts: TurnRequestParts, history: CanonicalMessage[]): number {
  return estimate(parts, prepareHistory(smallestWindow(history)));
}

/**
 * The history as a provider accepts it: tool_use blocks of cancelled messages without their results are
 * dropped (a provider refuses an unanswered tool_use), empty messages skipped, same-role runs merged.
 */
export function prepareHistory(messages: CanonicalMessage[]): CanonicalMessage[] {
  const answered = new Set<string>();
  for (const m of messages)
    for (const b of m.content) if (b.type === 'tool_result') answered.add(b.tool_use_id);
  const used = new Set<string>();
  const out: CanonicalMessage[] = [];
  for (const m of messages) {
    const content = m.content.filter((b) => {
      if (b.type === 'tool_use') {
        if (!answered.has(b.id)) return false;
        used.add(b.id);
      }
      if (b.type === 'tool_result') return used.has(b.tool_use_id);
      if (b.type === 'text') return b.text !== '';
      return true;
    });
    if (content.length === 0) continue;
    const last = out.at(-1);
    if (last && last.role === m.role) last.content = [...last.content, ...content];
    else out.push({ ...m, content });
  }
  return out;
}

// --- internal ---

function offeredTools(parts: Pick<TurnRequestParts, 'tools' | 'worker'>): readonly WorkspaceTool[] {
  return parts.worker ? parts.tools.filter((t) => t.name !== 'delegate') : parts.tools;
}

function estimate(parts: TurnRequestParts, messages: CanonicalMessage[]): number {
  return describeRequest(buildTurnRequest(parts, messages, null), { workspacePath: null })
    .estimatedInputTokens;
}
