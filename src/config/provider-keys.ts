/**
 * @module The provider key variables of DECISIONS §1 (ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY),
 * declared once: a key that no HTTP header can carry refuses the start, like every other bad setting.
 */
import type { AdapterName } from '../adapters/names.ts';
import { SvcError } from '../lib/errors.ts';
import type { SvcEnv } from './env.ts';

/** Each adapter's provider-key variable and its SvcEnv field. */
export const KEY_VARIABLES: Record<AdapterName, { name: string; field: keyof SvcEnv }> = {
  anthropic: { name: 'ANTHROPIC_API_KEY', field: 'anthropicApiKey' },
  openai: { name: 'OPENAI_API_KEY', field: 'openaiApiKey' },
  openrouter: { name: 'OPENROUTER_API_KEY', field: 'openrouterApiKey' },
};

/**
 * Throws `startup_refused` for the first set key holding a character an HTTP header value cannot carry (a
 * line break or another control character, or one past Latin-1: undici refuses such a header). Taken as it
 * was, every call to that provider failed as a connection error (502 upstream_error) with nothing said at
 * start. The key itself is never shown.
 */
export function assertProviderKeysSendable(env: SvcEnv): void {
  for (const { name, field } of Object.values(KEY_VARIABLES)) {
    const value = env[field];
    if (typeof value !== 'string' || !NOT_IN_A_HEADER.test(value)) continue;
    throw new SvcError('startup_refused', {
      message: `${name} holds a character an HTTP header cannot carry (a line break, another control character or one past Latin-1), so no call could send it; set it to the key alone and start svc again.`,
    });
  }
}

// --- internal ---

/** What a header value may not hold (undici's test): anything but tab, printable ASCII and Latin-1. */
const NOT_IN_A_HEADER = /[^\t\x20-\x7e\x80-\xff]/;
