/**
 * Anthropic message threads (beta `message-threads-2026-08-12`) for the fake provider: `thread: {type:
 * "create"}` holds the conversation (system, tools, messages and the reply) under the reply's `id`, and
 * `thread: {type: "continue", previous_message_id}` answers as if the held conversation came before the
 * request's new messages. The SDKs' tool runner threads by default (`client.beta.messages.toolRunner`), so a
 * fake that ignored `thread` would see a lone `tool_result` on the second turn and refuse it.
 *
 * Refusals carry the API's stable `error.details.error_code` (wire-formats §1.11), which the SDK reads to
 * replay the whole history: `thread_not_found` (404), `thread_already_continued` and
 * `thread_fingerprint_mismatch` (400).
 */

type Obj = Record<string, unknown>;

/** A conversation held under a reply id. */
type Held = { system: unknown; tools: unknown; messages: unknown[]; continued: boolean };

export type ThreadRefusal = { status: number; message: string; details: Obj };

/** Fields a thread keeps from its first turn; a later turn may leave them out but not change them. */
const CREATE_ONLY = ['system', 'tools'] as const;

export class FakeThreads {
  readonly #held = new Map<string, Held>();

  /**
   * The body to answer: unchanged without `thread`, the held conversation followed by the request's new
   * messages on a `continue`; or the API's refusal.
   */
  open(body: Obj): { body: Obj } | { refusal: ThreadRefusal } {
    const thread = body.thread as { type?: string; previous_message_id?: unknown } | null | undefined;
    if (thread?.type !== 'continue') return { body };
    const id = String(thread.previous_message_id);
    const held = this.#held.get(id);
    if (held === undefined)
      return {
        refusal: {
          status: 404,
          message: `thread.previous_message_id: no thread holds a message with id ${id}; replay the full conversation with thread: {"type": "create"}`,
          details: { error_code: 'thread_not_found' },
        },
      };
    if (held.continued)
      return {
        refusal: {
          status: 400,
          message: `thread.previous_message_id: message ${id} has already been continued; continue from the latest response id, or replay the full conversation with thread: {"type": "create"}`,
          details: { error_code: 'thread_already_continued' },
        },
      };
    const changed = CREATE_ONLY.filter(
      (f) => body[f] !== undefined && JSON.stringify(body[f]) !== JSON.stringify(held[f]),
    );
    if (changed.length > 0)
      return {
        refusal: {
          status: 400,
          message: `${changed.join(', ')}: differs from the value stored with the thread; send the stored value, or replay the full conversation with thread: {"type": "create"}`,
          details: { error_code: 'thread_fingerprint_mismatch' },
        },
      };
    held.continued = true;
    const full: Obj = { ...body, messages: [...held.messages, ...(body.messages as unknown[])] };
    for (const f of CREATE_ONLY) if (held[f] !== undefined) full[f] = held[f];
    return { body: full };
  }

  /** Holds the answered conversation of a threaded request under its reply id. */
  hold(body: Obj, replyId: string, replyContent: unknown): void {
    if (body.thread == null) return;
    this.#held.set(replyId, {
      system: body.system,
      tools: body.tools,
      messages: [...(body.messages as unknown[]), { role: 'assistant', content: replyContent }],
      continued: false,
    });
  }

  clear(): void {
    this.#held.clear();
  }
}
