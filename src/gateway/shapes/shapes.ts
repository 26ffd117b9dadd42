/**
 * @module The two inbound shapes as InboundShape objects, keyed by name; the pipeline picks one per route
 * (`/v1/messages` → anthropic, `/v1/chat/completions` → openai).
 */
import { decodeAnthropicRequest, validateAnthropicRequest } from './anthropic/decode.ts';
import { encodeAnthropicResponse } from './anthropic/encode.ts';
import { encodeAnthropicStream } from './anthropic/encode-stream.ts';
import { encodeAnthropicError, encodeAnthropicStreamError } from './anthropic/errors.ts';
import { decodeOpenAIRequest, validateOpenAIRequest } from './openai/decode.ts';
import { encodeOpenAIResponse } from './openai/encode.ts';
import { encodeOpenAIStream } from './openai/encode-stream.ts';
import { encodeOpenAIError, encodeOpenAIStreamError } from './openai/errors.ts';
import type { InboundShape } from './shape.ts';

export const anthropicShape: InboundShape = {
  name: 'anthropic',
  validate: validateAnthropicRequest,
  decode: decodeAnthropicRequest,
  encode: encodeAnthropicResponse,
  encodeStream: encodeAnthropicStream,
  encodeError: encodeAnthropicError,
  encodeStreamError: encodeAnthropicStreamError,
};

export const openaiShape: InboundShape = {
  name: 'openai',
  validate: validateOpenAIRequest,
  decode: (body) => decodeOpenAIRequest(body),
  encode: encodeOpenAIResponse,
  encodeStream: encodeOpenAIStream,
  encodeError: encodeOpenAIError,
  encodeStreamError: encodeOpenAIStreamError,
};

export const SHAPES = { anthropic: anthropicShape, openai: openaiShape } as const;
