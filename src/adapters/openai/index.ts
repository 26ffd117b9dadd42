/** @module OpenAI Chat Completions adapter (wire `openai`); `createOpenAIAdapter` lives in ../registry.ts. */
export { classifyOpenAIResponse, classifyOpenAIStreamError } from './errors.ts';
export { effortFromThinking } from './model-facts.ts';
export { encodeOpenAIPassthrough, encodeOpenAIRequest } from './request.ts';
export { encodeOpenAIMessages } from './request-messages.ts';
export { decodeFinishReason, decodeOpenAIResponse, decodeOpenAIUsage } from './response.ts';
export { createOpenAIStreamDecoder, rewriteOpenAIFrame } from './stream.ts';
