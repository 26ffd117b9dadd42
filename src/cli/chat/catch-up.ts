/**
 * @module What `svc chat` missed while its socket was away: a reconnect replays the persisted events only
 * (spec 2 §WebSocket stream), never the text deltas nor message.complete, so an answer streamed meanwhile
 * is read back from GET …/messages. Events wait while that read runs; each stored assistant message not
 * yet shown is printed before the first event with a greater id (the server draws message and event ids
 * from one ULID sequence, so that is where its stream stood), and the renderer prints a message once.
 */
import type { EventEnvelope } from '../../events/envelope.ts';
import { errorMessage } from '../../lib/errors.ts';
import type { ChatApi, StoredMessage } from './api.ts';

/** Messages read at a time (the server's cap on `limit`). */
const PAGE = 200;

export interface CatchUp {
  /** The first subscription's snapshot: its newest message is where a later read starts. */
  snapshot(messages: unknown[]): void;
  /** A socket subscribed again: stored messages are read, and events wait until they are in. */
  resubscribed(): void;
  /** An event of the stream, passed on in order. */
  event(e: EventEnvelope): void;
}

export interface CatchUpDeps {
  api: ChatApi;
  sessionId: string;
  /** Prints a stored assistant message unless it was shown. */
  stored(m: StoredMessage): void;
  /** The event, handled as it would have been live. */
  deliver(e: EventEnvelope): void;
  notice(text: string): void;
}

export function createCatchUp(d: CatchUpDeps): CatchUp {
  /** The newest message read (or in the snapshot): only later ones are read again. */
  let cursor: string | undefined;
  /** Stored assistant messages read back and not yet passed, in id order. */
  let pending: StoredMessage[] = [];
  /** Events held while a read runs; undefined when none does. */
  let held: EventEnvelope[] | undefined;
  let reading: Promise<void> = Promise.resolve();
  const pass = (e: EventEnvelope) => {
    while (pending.length > 0 && pending[0].id < e.id) d.stored(pending.shift()!);
    d.deliver(e);
  };
  const read = async () => {
    try {
      const { messages, next } = await readNewer(d.api, d.sessionId, cursor);
      cursor = next ?? cursor;
      const known = new Set(pending.map((m) => m.id));
      const fresh = messages.filter((m) => m.role === 'assistant' && !known.has(m.id));
      pending = [...pending, ...fresh].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    } catch (err) {
      d.notice(`the answers sent while reconnecting could not be read back (${errorMessage(err)})`);
    }
  };
  return {
    snapshot(messages) {
      const last = messages.at(-1) as { id?: unknown } | undefined;
      if (typeof last?.id === 'string') cursor = last.id;
    },
    resubscribed() {
      held ??= [];
      const mine = reading.then(read);
      reading = mine;
      void mine.then(() => {
        if (reading !== mine || !held) return; // a later reconnect's read releases them
        const waiting = held;
        held = undefined;
        for (const e of waiting) pass(e);
      });
    },
    event(e) {
      if (held) held.push(e);
      else pass(e);
    },
  };
}

// --- internal ---

/**
 * Every message after `after` (with none: the whole session), in id order, and the cursor for the next
 * read: the newest message before any still streaming (`in_progress`, whose content is not final yet).
 */
async function readNewer(
  api: ChatApi,
  sessionId: string,
  after: string | undefined,
): Promise<{ messages: StoredMessage[]; next: string | undefined }> {
  const all: StoredMessage[] = [];
  if (after !== undefined) {
    for (let cursor = after; ; ) {
      const page = await api.listMessages(sessionId, { after: cursor, limit: PAGE });
      all.push(...page.messages);
      if (!page.has_more_after || page.messages.length === 0) break;
      cursor = page.messages.at(-1)!.id;
    }
  } else {
    let page = await api.listMessages(sessionId, { limit: PAGE });
    all.push(...page.messages);
    while (page.has_more_before && page.messages.length > 0) {
      page = await api.listMessages(sessionId, { before: page.messages[0].id, limit: PAGE });
      all.unshift(...page.messages);
    }
  }
  const open = all.findIndex((m) => m.status === 'in_progress');
  const final = open < 0 ? all : all.slice(0, open);
  return { messages: final, next: final.at(-1)?.id };
}
