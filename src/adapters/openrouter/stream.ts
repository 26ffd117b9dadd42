/**
 * @module OpenRouter streams decode with the OpenAI decoder: keep-alive comments are dropped by the SSE
 * decoder, usage may ride on a last chunk that still has a choice, `finish_reason:"error"` is raised.
 */
export {
  createOpenAIStreamDecoder as createOpenRouterStreamDecoder,
  rewriteOpenAIFrame as rewriteOpenRouterFrame,
} from '../openai/stream.ts';
