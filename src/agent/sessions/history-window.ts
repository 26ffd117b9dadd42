/**
 * @module The part of a session's history one model call sends when the whole would not fit the routed
 * model's context: the oldest whole exchanges are left out, then the current turn's oldest tool steps, and
 * one note says so. A tool_use never loses its tool_result, and the current prompt and the newest step stay.
 * Only the model's view changes: stored messages, REST history and WebSocket replay keep everything.
 */
import type { CanonicalMessage } from '../../canonical/message.ts';
import { HISTORY_NOTES } from './messages.ts';

/** What the model reads where older messages were left out (once per view). */
export const LEFT_OUT_NOTE =
  "[Earlier messages of this conversation were left out here to fit the model's context window.]";

/**
 * `history` (sessionHistory order) whole when `fits` holds for it; otherwise the view that leaves out the
 * fewest oldest units and fits, or, when none fits, the smallest view (the provider then decides).
 * `fits` must hold for a view whenever it holds for a longer one (it is searched by bisection).
 */
export function windowHistory(
  history: CanonicalMessage[],
  fits: (view: CanonicalMessage[]) => boolean,
): CanonicalMessage[] {
  if (fits(history)) return history;
  const units = unitsOf(history);
  if (units.total === 0) return history;
  let lo = 1;
  let hi = units.total;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (fits(viewWithout(history, units, mid))) hi = mid;
    else lo = mid + 1;
  }
  return viewWithout(history, units, lo);
}

/** The smallest view windowHistory can return: the note, the current prompt and the newest step. */
export function smallestWindow(history: CanonicalMessage[]): CanonicalMessage[] {
  const units = unitsOf(history);
  return units.total === 0 ? history : viewWithout(history, units, units.total);
}

// --- internal ---

interface Units {
  /** Where each older exchange after the first starts, then the current prompt: the cut points. */
  exchangeStarts: number[];
  /** The current prompt's index (-1 when there is none). */
  prompt: number;
  /** Where each tool step of the current turn after its first starts (its assistant message). */
  stepStarts: number[];
  total: number;
}

const NOTE: CanonicalMessage = { role: 'user', content: [{ type: 'text', text: LEFT_OUT_NOTE }] };

/**
 * An exchange starts at a prompt: a user message that carries no tool_result and is not the cancelled
 * note (which closes the exchange before it). Cutting only there keeps every tool_use with its result.
 */
function unitsOf(history: CanonicalMessage[]): Units {
  const prompts: number[] = [];
  history.forEach((m, i) => {
    if (isPrompt(m)) prompts.push(i);
  });
  const prompt = prompts.at(-1) ?? -1;
  if (prompt < 0) return { exchangeStarts: [], prompt, stepStarts: [], total: 0 };
  const exchangeStarts = prompts.filter((i) => i > 0);
  const steps: number[] = [];
  for (let i = prompt + 1; i < history.length; i++) if (history[i].role === 'assistant') steps.push(i);
  // the newest step is never left out: the model must see the results it just asked for
  const stepStarts = steps.slice(1);
  return { exchangeStarts, prompt, stepStarts, total: exchangeStarts.length + stepStarts.length };
}

/** The view with the `n` oldest units left out (1 ≤ n ≤ units.total) and the note where they were. */
function viewWithout(history: CanonicalMessage[], units: Units, n: number): CanonicalMessage[] {
  const { exchangeStarts, stepStarts } = units;
  if (n <= exchangeStarts.length) return [NOTE, ...history.slice(exchangeStarts[n - 1])];
  const from = stepStarts[n - exchangeStarts.length - 1];
  return [history[units.prompt], NOTE, ...history.slice(from)];
}

function isPrompt(m: CanonicalMessage): boolean {
  if (m.role !== 'user') return false;
  if (m.content.some((b) => b.type === 'tool_result')) return false;
  return !m.content.every((b) => b.type === 'text' && HISTORY_NOTES.has(b.text));
}
