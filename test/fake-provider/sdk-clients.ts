/**
 * The official SDKs pointed at a running fake provider, as a client would use them (no retries, no SDK log
 * lines), for tests of what the fake sends.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { RunningFakeProvider } from './server.ts';

export function fakeSdkClients(
  fake: Pick<RunningFakeProvider, 'anthropicBaseUrl' | 'openaiBaseUrl' | 'openrouterBaseUrl'>,
) {
  const quiet = { maxRetries: 0, logLevel: 'off' } as const;
  return {
    anthropic: new Anthropic({ apiKey: 'sk-ant-test', baseURL: fake.anthropicBaseUrl, ...quiet }),
    openai: new OpenAI({ apiKey: 'sk-test', baseURL: fake.openaiBaseUrl, ...quiet }),
    openrouter: new OpenAI({ apiKey: 'sk-or-test', baseURL: fake.openrouterBaseUrl, ...quiet }),
  };
}
