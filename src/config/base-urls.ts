/**
 * @module The provider base URLs of DECISIONS §1 (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, OPENROUTER_BASE_URL):
 * a value that is not an http(s) URL refuses the start, like every other bad setting. Taken as it was, every
 * call to that provider failed as a connection error (502 after the retries) with nothing said at start.
 */
import type { AdapterName } from '../adapters/names.ts';
import { SvcError } from '../lib/errors.ts';
import { withoutUserinfo } from '../lib/url-userinfo.ts';
import type { SvcEnv } from './env.ts';

/** Each provider's base URL when its variable is unset (DECISIONS §1). */
export const DEFAULT_BASE_URLS: Record<AdapterName, string> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
  openrouter: 'https://openrouter.ai/api/v1',
};

const BASE_URLS = [
  ['ANTHROPIC_BASE_URL', 'anthropicBaseUrl', 'anthropic'],
  ['OPENAI_BASE_URL', 'openaiBaseUrl', 'openai'],
  ['OPENROUTER_BASE_URL', 'openrouterBaseUrl', 'openrouter'],
] as const;

/** Throws `startup_refused` for the first set base URL that is not an http:// or https:// URL. */
export function assertBaseUrls(env: SvcEnv): void {
  for (const [name, field, adapter] of BASE_URLS) {
    const example = DEFAULT_BASE_URLS[adapter];
    const value = env[field];
    if (value === undefined || isHttpUrl(value)) continue;
    throw new SvcError('startup_refused', {
      message: `${name} must be an http:// or https:// URL such as ${example}, not "${withoutUserinfo(value)}"; fix or unset it and start svc again.`,
    });
  }
}

// --- internal ---

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}
