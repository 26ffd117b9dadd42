/**
 * @module What `svc chat` prints for the preset:chat events: text deltas as they arrive, one compact line
 * per tool call and result, delegation, failures, and the turn's end with its cost. Meta lines are dimmed
 * on a terminal, unless NO_COLOR is set. Unknown event types are ignored (spec 2 §WebSocket stream).
 */
import type { Writable } from 'node:stream';
import type { EventEnvelope } from '../../events/envelope.ts';
import { needsQuotes, terminalSafe } from './terminal-text.ts';

export interface Printer {
  /** Assistant text, as is (but for terminal control characters, shown as signs: terminal-text.ts). */
  text(chunk: string): void;
  /** A line of its own (a newline first if text is mid-line). */
  line(text: string, dim?: boolean): void;
  /** Ends the current line when text is mid-line. */
  endLine(): void;
}

/**
 * `env`: where NO_COLOR is read (no-color.org: set and not empty, no colour or dimming even on a terminal).
 */
export function createPrinter(
  out: Writable & { isTTY?: boolean },
  env: Record<string, string | undefined> = process.env,
): Printer {
  let midLine = false;
  /**
   * The end of the last text chunk, held back: a CR whose LF may open the next chunk (CRLF is a line break,
   * a lone CR a sign), or the first half of a surrogate pair (written alone it would print as U+FFFD).
   */
  let held = '';
  const color = out.isTTY === true && !env.NO_COLOR;
  const write = (s: string) => {
    if (s.length === 0 || out.destroyed) return; // a closed output is reported once by run-chat.ts
    out.write(s);
    midLine = !s.endsWith('\n');
  };
  const flush = () => {
    const rest = held;
    held = '';
    write(terminalSafe(rest));
  };
  const dimmed = (s: string) => (color ? `\u001b[2m${s}\u001b[0m` : s);
  return {
    text(chunk) {
      const all = held + chunk;
      const last = all.charCodeAt(all.length - 1);
      const keep = last === 0x0d || (last >= 0xd800 && last <= 0xdbff) ? 1 : 0;
      held = all.slice(all.length - keep);
      write(terminalSafe(all.slice(0, all.length - keep)));
    },
    line(text, dim = false) {
      flush();
      if (midLine) write('\n');
      const safe = terminalSafe(text);
      write(`${dim ? dimmed(safe) : safe}\n`);
    },
    endLine() {
      flush();
      if (midLine) write('\n');
    },
  };
}

export interface Renderer {
  /** Prints an event (confirmations are asked by the caller). */
  event(e: EventEnvelope): void;
  /**
   * A stored assistant message read back after a reconnect (its stream events were missed): its text,
   * unless the stream already showed it in full.
   */
  stored(m: { id: string; content: unknown }): void;
  /** The stream subscribed again after a lost socket: a message's missed part from now on was missed then. */
  reconnected(): void;
}

/**
 * A message whose deltas were not all seen (a reconnect in its middle, or svc chat attached to the session
 * while it streamed: streaming events are never replayed) is printed again from its final content; one
 * whose every delta was missed, in full. A message is printed once: its later deltas and message.complete
 * are skipped. The line before the full text says which of the two it was.
 */
export function createRenderer(p: Printer): Renderer {
  const shown = new Map<string, string>();
  const done = new Set<string>();
  /** Whether the stream ever reconnected: before that, only what streamed before the attach was missed. */
  let reconnects = false;
  const finish = (id: string, final: string, afterReconnect: boolean) => {
    const seen = shown.get(id) ?? '';
    shown.delete(id);
    done.add(id);
    if (seen === final || final === '') return p.endLine();
    if (seen !== '')
      p.line(
        `· part of this message ${afterReconnect ? MISSED_RECONNECTING : MISSED_ATTACHING}; in full:`,
        true,
      );
    p.endLine();
    p.text(final);
    p.endLine();
  };
  return {
    event(e) {
      const pl = e.payload as Record<string, any>;
      const id = typeof pl?.message_id === 'string' ? pl.message_id : undefined;
      if (id !== undefined && done.has(id) && (e.type === 'text.delta' || e.type === 'message.complete'))
        return;
      if (e.type === 'text.delta')
        shown.set(pl.message_id, (shown.get(pl.message_id) ?? '') + String(pl.text ?? ''));
      if (e.type === 'message.complete')
        return finish(pl.message_id, finalText(pl.final_content), reconnects);
      renderEvent(p, e);
    },
    stored(m) {
      // a stored copy is read back only after a reconnect (catch-up.ts)
      if (!done.has(m.id)) finish(m.id, finalText(m.content), true);
    },
    reconnected() {
      reconnects = true;
    },
  };
}

// --- internal ---

const MISSED_RECONNECTING = 'was missed while reconnecting';
const MISSED_ATTACHING = 'streamed before svc chat attached';

function renderEvent(p: Printer, e: EventEnvelope): void {
  const pl = e.payload as Record<string, any>;
  switch (e.type) {
    case 'route.decided':
      if (pl.chosen_model) p.line(`· ${pl.chosen_model}`, true);
      return;
    case 'text.delta':
      p.text(String(pl.text ?? ''));
      return;
    case 'tool.called':
      p.line(
        `⚙ ${[pl.tool_name, compactInput(pl.input, pl.input_truncated)].filter((x) => x !== '').join(' ')}`,
      );
      return;
    case 'tool.completed':
      p.line(
        `  ✓ ${pl.tool_name} (${bytes(pl.output_bytes)}${pl.truncated ? ', truncated' : ''}, ${Math.round(Number(pl.latency_ms))} ms)`,
        true,
      );
      return;
    case 'tool.failed':
      p.line(`  ✗ ${pl.tool_name}: ${pl.error_class}${pl.message ? ` (${oneLine(pl.message, 120)})` : ''}`);
      return;
    case 'llm.call_failed':
      if (pl.error_class !== 'cancelled')
        p.line(`! model call failed: ${oneLine(String(pl.message ?? pl.error_class), 200)}`);
      return;
    case 'delegate.started':
      p.line(`↳ delegating to ${pl.model}: ${oneLine(String(pl.task ?? ''), 100)}`);
      return;
    case 'delegate.completed':
      p.line(`↳ worker done ($${pl.cost_usd}, ${stepsOf(pl.steps)})`, true);
      return;
    case 'delegate.failed':
      p.line(`↳ worker failed: ${pl.failure_mode}`);
      return;
    case 'turn.completed': {
      // a turn that ended at the step limit or on a cut or refused answer did not finish its work: said so
      const stopped = pl.status === 'completed' && !FINISHED_STOPS.includes(pl.stop_reason);
      p.line(
        pl.status !== 'completed'
          ? `— failed: ${pl.error_code ?? pl.status} · $${pl.cost_usd}`
          : `— ${stopped ? `stopped: ${pl.stop_reason}` : 'done'} · $${pl.cost_usd} · ${stepsOf(pl.steps)}`,
        pl.status === 'completed' && !stopped,
      );
      return;
    }
    case 'turn.cancelled':
      p.line(`— cancelled (${pl.reason}) · $${pl.cost_usd ?? '0'}`);
      return;
  }
}

/** Stop reasons of a turn that finished its answer (any other, such as max_steps or max_tokens, stopped it). */
const FINISHED_STOPS: readonly unknown[] = ['end_turn', 'stop_sequence', null, undefined];

/** `path=app.txt content="…" (12 chars)`: every input field on one short line. */
function stepsOf(n: unknown): string {
  return `${n} step${n === 1 ? '' : 's'}`;
}

/**
 * `truncated`: the event's input_truncated, the full lengths of the strings the event carries cut. `whole`:
 * fields shown in full, quoted with their line breaks escaped, as a confirmation question shows the command
 * and the path the user is asked about (a long one cut to its first 60 characters could hide its end).
 * Safe for a terminal: no control character of the input reaches it (terminal-text.ts).
 */
export function compactInput(input: unknown, truncated?: unknown, whole: readonly string[] = []): string {
  if (!input || typeof input !== 'object') return '';
  const lengths = (truncated && typeof truncated === 'object' ? truncated : {}) as Record<string, unknown>;
  const fields = Object.entries(input as Record<string, unknown>).map(([k, v]) => {
    if (typeof v === 'string') {
      const length = typeof lengths[k] === 'number' ? lengths[k] : v.length;
      if (whole.includes(k)) {
        const cut = length > v.length ? ` (${length} chars)` : '';
        return `${k}=${needsQuotes(v) ? JSON.stringify(v) : v}${cut}`;
      }
      const shown = oneLine(v, 60);
      return `${k}=${shown === v && !needsQuotes(v) ? v : JSON.stringify(shown)}${length > 60 ? ` (${length} chars)` : ''}`;
    }
    return `${k}=${oneLine(JSON.stringify(v), 60)}`;
  });
  return terminalSafe(fields.join(' '));
}

function finalText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .filter((b): b is { type: 'text'; text: string } => b?.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('');
}

function oneLine(s: string, max: number): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function bytes(n: unknown): string {
  const v = Number(n ?? 0);
  return v < 1024
    ? `${v} B`
    : v < 1024 * 1024
      ? `${(v / 1024).toFixed(1)} KiB`
      : `${(v / 1048576).toFixed(1)} MiB`;
}
