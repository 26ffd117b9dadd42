/**
 * The responses the fake's Responses API stored, as OpenAI keeps them: every answer unless the request said
 * `store: false`, under its response id. A `previous_response_id` naming one it never stored (another
 * gateway's id, a `store: false` answer) is the API's 400 `previous_response_not_found`, so a gateway that
 * sent OpenAI an id only it knows fails as it would against the real API.
 */

type Obj = Record<string, unknown>;

export class FakeStoredResponses {
  readonly #ids = new Set<string>();

  /** The API's refusal of `body` (status and error body), or undefined when it continues a stored response. */
  refusal(body: Obj): { status: number; body: Obj } | undefined {
    const previous = body.previous_response_id;
    if (typeof previous !== 'string' || this.#ids.has(previous)) return undefined;
    const error = {
      message: `Previous response with id '${previous}' not found.`,
      type: 'invalid_request_error',
      param: 'previous_response_id',
      code: 'previous_response_not_found',
    };
    return { status: 400, body: { error } };
  }

  /** Stores the answer `id` to `body`, unless it asked for store: false. */
  hold(body: Obj, id: string): void {
    if (body.store !== false) this.#ids.add(id);
  }

  clear(): void {
    this.#ids.clear();
  }
}
