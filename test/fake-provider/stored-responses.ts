/**
 * The responses the fake's Responses API stored, as OpenAI keeps them: every answer unless the request said
 * `store: false`, under its response id. A `previous_response_id` naming one it never stored (another
 * gateway's id, a `store: false` answer) is the API's 400 `previous_response_not_found`, so a gateway that
 * sent OpenAI an id only it knows fails as it would against the real API. An input item naming an item of
 * its (an `item_reference`, or a `reasoning` item by its id without its `encrypted_content`) must name one
 * of a stored answer, else the API's 404 "Item with id 'rs_…' not found. Items are not persisted when
 * `store` is set to false. …" (vercel/ai#7543, can1357/oh-my-pi#41).
 */

type Obj = Record<string, unknown>;

export class FakeStoredResponses {
  readonly #ids = new Set<string>();

  /** The API's refusal of `body` (status and error body), or undefined when what it names is stored. */
  refusal(body: Obj): { status: number; body: Obj } | undefined {
    const missing = this.#missingItem(body);
    if (missing !== undefined) {
      const message = `Item with id '${missing}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`;
      return {
        status: 404,
        body: { error: { message, type: 'invalid_request_error', param: 'input', code: null } },
      };
    }
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

  /** The id of an input item `body` names by reference that no stored answer holds. */
  #missingItem(body: Obj): string | undefined {
    const input = Array.isArray(body.input) ? (body.input as Obj[]) : [];
    for (const item of input) {
      const named =
        item?.type === 'item_reference' || (item?.type === 'reasoning' && item.encrypted_content == null);
      if (named && typeof item.id === 'string' && !this.#holdsItem(item.id)) return item.id;
    }
    return undefined;
  }

  /** Output item ids are `<prefix>_<response id without resp_><index>` (openai-responses.ts itemId). */
  #holdsItem(id: string): boolean {
    const rest = id.slice(id.indexOf('_') + 1);
    for (const response of this.#ids) {
      const stem = response.slice('resp_'.length);
      if (rest.startsWith(stem) && /^\d+$/.test(rest.slice(stem.length))) return true;
    }
    return false;
  }

  clear(): void {
    this.#ids.clear();
  }
}
