/**
 * @module `svc chat`: a terminal client of `svc serve`. Creates a session (or resumes `--session`), follows
 * its stream with preset:chat, and for each line read submits a turn and prints it as it streams; tool
 * confirmations are asked y/n/a (a = allow for the session) and answered over REST; Ctrl-C cancels the
 * running turn and a second one quits. With piped stdin every line is a prompt or an answer, in order.
 */
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import type { EventEnvelope } from '../../events/envelope.ts';
import { errorMessage, isSvcError, SvcError } from '../../lib/errors.ts';
import { type ChatApi, createChatApi } from './api.ts';
import { createCatchUp } from './catch-up.ts';
import { createLineSource, type LineSource } from './input.ts';
import { compactInput, createPrinter, createRenderer, type Printer } from './render.ts';
import { openChatStream } from './stream.ts';
import { terminalSafe } from './terminal-text.ts';

export interface ChatOptions {
  server: string;
  workspace: string;
  session?: string;
  model?: string;
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: Writable & { isTTY?: boolean };
}

/** Exit code of an interrupted chat (a second Ctrl-C after one cancelled the turn). */
const INTERRUPTED = 130;

/** Runs the chat until the input ends or the user quits; resolves with the exit code. */
export async function runChat(o: ChatOptions): Promise<number> {
  const api = createChatApi(o.server);
  const p = createPrinter(o.output);
  const sessionId = await openSession(api, o, p);
  const lines = createLineSource(o.input, o.output);
  const turns = createTurnTracker();
  let current: string | undefined;
  let submitting = false;
  let cancelling = false;
  let quit: number | undefined;
  let failed = false;
  let fatal: SvcError | undefined;

  let cancelOnClose: Promise<unknown> = Promise.resolve();
  // the reader went away (`svc chat | head -1`): nothing more can be shown, so the running turn is cancelled
  o.output.on('error', (err) => {
    if (fatal) return;
    const turn = current;
    fatal = new SvcError('io_error', {
      message: `Standard output closed (${errorMessage(err)}); ${turn ? 'the running turn was cancelled' : 'stopped'}.`,
      cause: err,
    });
    if (turn) cancelOnClose = api.cancelTurn(sessionId, turn, 'output closed (svc chat)').catch(() => {});
    turns.abort();
    lines.close();
    stream.close();
  });
  /**
   * Stream events that came while a line was being submitted: shown once its answer was (a refused turn's
   * end is on the stream before or after the 503 that says why, and the reason goes first).
   */
  let heldWhileSubmitting: EventEnvelope[] | undefined;
  const render = createRenderer(p);
  const questions = createQuestions();
  const notice = (text: string) => p.line(`· ${text}`, true);
  // an answer streamed while the socket was away is read back from the store before the replay goes on
  const catchUp = createCatchUp({
    api,
    sessionId,
    stored: (m) => render.stored(m),
    deliver(e) {
      render.event(e);
      if (e.type === 'tool.confirmation_requested')
        void confirm(api, p, lines, sessionId, e, questions.ask(e));
      if (e.type === 'tool.confirmation_resolved') questions.resolved(e);
      if (e.type === 'turn.completed' || e.type === 'turn.cancelled') {
        questions.turnEnded(e);
        turns.end(e);
      }
    },
    notice,
  });
  const stream = openChatStream(api, sessionId, {
    onEvent: (e) => (heldWhileSubmitting ? heldWhileSubmitting.push(e) : catchUp.event(e)),
    onSnapshot(snap) {
      catchUp.snapshot(snap.messages);
      const s = snap.session as { turn_count: number; cost_so_far_usd: number };
      const n = s.turn_count;
      if (o.session) p.line(`resumed · ${n} turn${n === 1 ? '' : 's'} so far · $${s.cost_so_far_usd}`, true);
    },
    onResubscribed() {
      render.reconnected();
      catchUp.resubscribed();
    },
    onNotice: notice,
    onFatal(err) {
      fatal = err;
      turns.abort();
      lines.close();
    },
  });
  let cancelSent: Promise<unknown> = Promise.resolve();
  const cancel = (turnId: string) => {
    cancelSent = api
      .cancelTurn(sessionId, turnId, 'cancelled from svc chat')
      .catch((err) => p.line(`! ${message(err)}`));
  };
  lines.onInterrupt(() => {
    // a line already sent is a running turn even before POST …/turns answered with its id
    if ((current || submitting) && !cancelling) {
      cancelling = true;
      p.line('^C cancelling the turn (Ctrl-C again to quit)', true);
      if (current) cancel(current);
      return;
    }
    // "Ctrl-C again" quits with 130 even when the cancel it follows has already ended the turn
    quit = current || submitting || cancelling ? INTERRUPTED : 0;
    turns.abort();
    lines.close();
    stream.close(); // also ends a wait for the stream to reconnect
  });

  try {
    await stream.ready;
    for (;;) {
      p.endLine();
      const line = await lines.next('› ');
      if (line === null || quit !== undefined) break;
      if (!lines.interactive) p.line(`› ${line}`);
      const text = line.trim();
      if (text === '') continue;
      if (text === '/exit' || text === '/quit') break;
      // the answer streams on the socket: a line typed while it reconnects waits for it
      const live = stream.live();
      if (!(await Promise.race([live, Promise.resolve(undefined)])))
        p.line('· waiting for the stream to reconnect', true);
      if (!(await live) || quit !== undefined) break;
      let turnId: string;
      let refusedTurn: unknown;
      cancelling = false;
      submitting = true;
      heldWhileSubmitting = [];
      try {
        turnId = (await api.submitTurn(sessionId, text)).turn_id;
      } catch (err) {
        p.line(`! ${message(err)}`);
        failed = true;
        refusedTurn = isSvcError(err) ? err.details?.turn_id : undefined;
        continue;
      } finally {
        submitting = false;
        const held = heldWhileSubmitting;
        heldWhileSubmitting = undefined;
        for (const e of held) catchUp.event(e);
        // a turn refused once started (503 routing_failed) ends on the stream too: its end line comes
        // before the next prompt, not after it
        if (typeof refusedTurn === 'string') await turns.wait(refusedTurn);
      }
      current = turnId;
      // Ctrl-C while the turn was being submitted: it is cancelled as soon as its id is known
      if (cancelling) cancel(turnId);
      const end = await turns.wait(turnId);
      current = undefined;
      if (!end) break;
      if (end.type === 'turn.completed' && (end.payload as { status?: string }).status !== 'completed')
        failed = true;
    }
  } finally {
    stream.close();
    lines.close();
    await cancelOnClose;
    await cancelSent; // a quit right after a cancel still sends it
  }
  if (fatal) throw fatal;
  if (quit !== undefined) return quit;
  return failed && !lines.interactive ? 1 : 0;
}

// --- internal ---

/**
 * `call`, whose refusal with error code `code` (the server's words: its REST fields) is said in the CLI's
 * words, `message` of that refusal: the flag the chat user typed and what to do instead.
 */
async function inFlagWords<T>(
  call: Promise<T>,
  code: string,
  message: (err: SvcError) => string,
): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (!isSvcError(err) || err.details?.code !== code) throw err;
    throw new SvcError(err.code, { message: message(err), details: err.details, cause: err });
  }
}

/**
 * The server names the field the model went in (initial_active_model, active_model) and its own GET
 * /models; a chat user typed --model: the refusal of an unknown model says so.
 */
function asModelFlag<T>(call: Promise<T>): Promise<T> {
  return inFlagWords(call, 'model_not_configured', (err) =>
    err.message
      .replace(/^(initial_active_model|active_model): /, '--model ')
      .replace('GET /models lists them', "svc serve's GET /models lists them"),
  );
}

/**
 * The server refuses a folder that is not a directory by its REST field (workspace_path); a chat user typed
 * --workspace (or left it to the current directory): the refusal says so.
 */
function asWorkspaceFlag<T>(call: Promise<T>, workspace: string): Promise<T> {
  return inFlagWords(
    call,
    'workspace_not_found',
    () =>
      `--workspace ${workspace} is not an existing directory; pass the folder to work in (the default is the current directory). (workspace_not_found)`,
  );
}

/** `--session` naming no session of this server: which server, and what to do instead. */
function knownSession<T>(call: Promise<T>, o: ChatOptions): Promise<T> {
  return inFlagWords(
    call,
    'session_not_found',
    () =>
      `--session ${o.session} is no session of the agent server at ${o.server}; start a new one with \`svc chat\` (without --session), or pass an id its GET /sessions lists. (session_not_found)`,
  );
}

async function openSession(api: ChatApi, o: ChatOptions, p: Printer): Promise<string> {
  if (o.session) {
    const s = await knownSession(api.getSession(o.session), o);
    // an ended session refuses every turn: say so now rather than at the first prompt
    if (s.ended_at)
      throw new SvcError('session_already_ended', {
        message: `Session ${s.id} ended at ${s.ended_at}; start a new one (svc chat without --session).`,
      });
    let model = s.active_model;
    if (o.model) model = (await asModelFlag(api.setModel(s.id, o.model))).active_model;
    p.line(`session ${s.id} · ${s.workspace_path} · ${model}`, true);
    return s.id;
  }
  const workspace = resolve(o.workspace);
  const created = await asWorkspaceFlag(asModelFlag(api.createSession(workspace, o.model)), workspace);
  const s = await api.getSession(created.id);
  p.line(`session ${s.id} · ${s.workspace_path} · ${s.active_model}`, true);
  return s.id;
}

/**
 * y/yes: allow once; a/always: allow for the session; anything else (or no more input): deny. `withdrawn`
 * aborts (its reason the sentence to show) when the request was resolved elsewhere or its turn ended.
 */
async function confirm(
  api: ChatApi,
  p: Printer,
  lines: LineSource,
  sessionId: string,
  e: EventEnvelope,
  withdrawn: AbortSignal,
): Promise<void> {
  const pl = e.payload as {
    request_id: string;
    tool_name: string;
    input: unknown;
    input_truncated?: unknown;
  };
  // the command and the path asked about are shown whole; the question is safe for a terminal as a whole
  const shown = compactInput(pl.input, pl.input_truncated, ['command', 'path']);
  const question = terminalSafe(`? allow ${pl.tool_name} ${shown} [y/n/a] `);
  p.endLine();
  // from a pipe too, the question shows before its answer is read: a program driving svc chat waits for it
  if (!lines.interactive) p.text(question);
  const answer = await lines.next(question, withdrawn);
  if (answer === null && withdrawn.aborted) {
    const why = String(withdrawn.reason);
    return lines.interactive ? p.line(`· ${why}`, true) : p.text(`(${why})\n`);
  }
  if (!lines.interactive) p.text(`${answer ?? '(no more input: deny)'}\n`);
  const a = (answer ?? '').trim().toLowerCase();
  const decision = a === 'y' || a === 'yes' || a === 'a' || a === 'always' ? 'allow' : 'deny';
  const scope = a === 'a' || a === 'always' ? 'session' : 'once';
  try {
    const r = await api.confirm(sessionId, e.turn_id ?? '', pl.request_id, decision, scope);
    if (!r.applied) p.line('· already answered', true);
  } catch (err) {
    p.line(`! ${message(err)}`);
  }
}

interface Questions {
  /** A confirmation request is asked: the signal that withdraws its question. */
  ask(e: EventEnvelope): AbortSignal;
  /** tool.confirmation_resolved: a question still open was answered elsewhere (or timed out). */
  resolved(e: EventEnvelope): void;
  /** The turn ended: its open questions are moot. */
  turnEnded(e: EventEnvelope): void;
}

const TURN_ENDED = 'the turn ended before an answer';

/** Open confirmation questions by request id, so one answered elsewhere stops waiting for a line. */
function createQuestions(): Questions {
  const open = new Map<string, { turnId: string | null; ctrl: AbortController }>();
  const withdraw = (requestId: string, why: string) => {
    open.get(requestId)?.ctrl.abort(why);
    open.delete(requestId);
  };
  return {
    ask(e) {
      const ctrl = new AbortController();
      open.set((e.payload as { request_id: string }).request_id, { turnId: e.turn_id, ctrl });
      return ctrl.signal;
    },
    resolved(e) {
      const pl = e.payload as {
        request_id: string;
        decision?: string;
        timed_out?: boolean;
        cancelled?: boolean;
      };
      // a cancelled turn resolves its open request as a deny nobody gave (cancelled: true): not an answer
      const why = pl.cancelled
        ? TURN_ENDED
        : pl.timed_out
          ? 'not answered in time: denied'
          : `answered elsewhere: ${pl.decision}`;
      withdraw(pl.request_id, why);
    },
    turnEnded(e) {
      for (const [id, q] of open) if (q.turnId === e.turn_id) withdraw(id, TURN_ENDED);
    },
  };
}

interface TurnTracker {
  end(e: EventEnvelope): void;
  /** The turn's end event, or null when the chat is stopping. */
  wait(turnId: string): Promise<EventEnvelope | null>;
  abort(): void;
}

/** Turn ends by id: an end may arrive on the stream before POST …/turns answered with the id. */
function createTurnTracker(): TurnTracker {
  const ended = new Map<string, EventEnvelope>();
  const waiters = new Map<string, (e: EventEnvelope | null) => void>();
  let aborted = false;
  return {
    end(e) {
      if (!e.turn_id) return;
      const w = waiters.get(e.turn_id);
      if (w) {
        waiters.delete(e.turn_id);
        w(e);
      } else ended.set(e.turn_id, e);
    },
    wait(turnId) {
      if (aborted) return Promise.resolve(null);
      const hit = ended.get(turnId);
      if (hit) {
        ended.delete(turnId);
        return Promise.resolve(hit);
      }
      return new Promise((r) => waiters.set(turnId, r));
    },
    abort() {
      aborted = true;
      for (const w of waiters.values()) w(null);
      waiters.clear();
    },
  };
}

function message(err: unknown): string {
  return isSvcError(err) || err instanceof Error ? err.message : String(err);
}
