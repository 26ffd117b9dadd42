/** @module OpenRouter adapter (wire `openai`); `createOpenRouterAdapter` lives in ../registry.ts. */
export { classifyOpenRouterResponse, classifyOpenRouterStreamError } from './errors.ts';
export { encodeOpenRouterPassthrough, encodeOpenRouterRequest, type OpenRouterOptions } from './request.ts';
export { decodeOpenRouterResponse } from './response.ts';
export { createOpenRouterStreamDecoder, rewriteOpenRouterFrame } from './stream.ts';
