/** @module Anthropic Messages adapter (wire `anthropic`); `createAnthropicAdapter` lives in ../registry.ts. */
export { classifyAnthropicResponse, classifyAnthropicStreamError } from './errors.ts';
export { encodeAnthropicPassthrough, encodeAnthropicRequest } from './request.ts';
export { encodeAnthropicMessages, sanitizeToolId } from './request-messages.ts';
export { decodeAnthropicResponse, decodeAnthropicUsage } from './response.ts';
export { createAnthropicStreamDecoder, rewriteAnthropicFrame } from './stream.ts';
