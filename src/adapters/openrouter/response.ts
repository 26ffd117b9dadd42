/**
 * @module OpenRouter responses decode with the OpenAI mapping, which already reads OpenRouter's additions
 * (`reasoning`, `reasoning_details`, `usage.cost`, `cache_write_tokens`, errors embedded in a 200).
 */
export { decodeOpenAIResponse as decodeOpenRouterResponse } from '../openai/response.ts';
