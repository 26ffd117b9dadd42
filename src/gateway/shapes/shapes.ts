/**
 * @module The inbound shapes as InboundShape objects, keyed by name; the pipeline picks one per route
 * (`/v1/messages` → anthropic, `/v1/chat/completions` → openai, `/v1/responses` → openai_responses).
 */
import type { InboundShape as InboundShapeName } from '../../events/catalog.ts';
import { decodeAnthropicRequest, validateAnthropicRequest } from './anthropic/decode.ts';
import { encodeAnthropicResponse } from './anthropic/encode.ts';
import { encodeAnthropicStream } from './anthropic/encode-stream.ts';
import { encodeAnthropicError, encodeAnthropicStreamError } from './anthropic/errors.ts';
import { decodeOpenAIRequest, validateOpenAIRequest } from './openai/decode.ts';
import { encodeOpenAIResponse } from './openai/encode.ts';
import { encodeOpenAIStream } from './openai/encode-stream.ts';
import { encodeOpenAIError, encodeOpenAIStreamError } from './openai/errors.ts';
import { decodeResponsesRequest, validateResponsesRequest } from './responses/decode.ts';
import { encodeResponsesResponse } from './responses/encode.ts';
import { encodeResponsesStream } from './responses/encode-stream.ts';
import {
  createResponsesPassthroughEnd,
  encodeResponsesError,
  encodeResponsesStreamError,
} from './responses/errors.ts';
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

export const responsesShape: InboundShape = {
  name: 'openai_responses',
  validate: validateResponsesRequest,
  decode: (body) => decodeResponsesRequest(body),
  encode: encodeResponsesResponse,
  encodeStream: encodeResponsesStream,
  encodeError: encodeResponsesError,
  encodeStreamError: encodeResponsesStreamError,
  createPassthroughEnd: createResponsesPassthroughEnd,
};

export const SHAPES: Readonly<Record<InboundShapeName, InboundShape>> = {
  anthropic: anthropicShape,
  openai: openaiShape,
  openai_responses: responsesShape,
};
