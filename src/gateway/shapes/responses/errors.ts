/**
 * @module Errors on POST /v1/responses: the OpenAI error body (the same as Chat Completions, DECISIONS §4)
 * for an HTTP answer, and the Responses stream's `error` event for a failure after the first event.
 */
import { encodeOpenAIError } from '../openai/errors.ts';
import type { ShapeErrorResponse } from '../shape.ts';

export function encodeResponsesError(value: unknown): ShapeErrorResponse {
  return encodeOpenAIError(value);
}

/** `error` event fields, nested form: `{error:{type, code, message, param}}`. */
export function responsesErrorFields(value: unknown): Record<string, unknown> {
  const { error } = encodeOpenAIError(value).body as { error: Record<string, unknown> };
  return { error: { type: error.type, code: error.code, message: error.message, param: null } };
}

/** A standalone `error` event (the same-wire path, which does not know the stream's sequence). */
export function encodeResponsesStreamError(value: unknown): string {
  const data = JSON.stringify({ type: 'error', sequence_number: 0, ...responsesErrorFields(value) });
  return `event: error\ndata: ${data}\n\n`;
}
