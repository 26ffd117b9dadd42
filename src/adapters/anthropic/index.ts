/** @module Anthropic Messages adapter (wire `anthropic`); `createAnthropicAdapter` lives in ../registry.ts. */
export { classifyAnthropicResponse, classifyAnthropicStreamError } from './errors.ts';
export {
  encodeAnthropicMessages,
  encodeAnthropicPassthrough,
  encodeAnthropicRequest,
  sanitizeToolId,
} from './request.ts';
export { decodeAnthropicResponse, decodeAnthropicUsage } from './response.ts';
export { createAnthropicStreamDecoder, rewriteAnthropicFrame } from './stream.ts';
