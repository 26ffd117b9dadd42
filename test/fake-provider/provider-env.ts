/**
 * The environment that points a `svc gateway` / `svc serve` child at a running fake provider: each named
 * provider's API key (any non-empty key is accepted) and base URL. A provider left out gets neither, so the
 * child has no key for it.
 */
import type { RunningFakeProvider } from './server.ts';

export type FakeProviderName = 'anthropic' | 'openai' | 'openrouter';

const ALL: readonly FakeProviderName[] = ['anthropic', 'openai', 'openrouter'];

/** ANTHROPIC_/OPENAI_/OPENROUTER_ API_KEY and BASE_URL for the named providers (all three by default). */
export function fakeProviderEnv(
  fake: Pick<RunningFakeProvider, 'anthropicBaseUrl' | 'openaiBaseUrl' | 'openrouterBaseUrl'>,
  providers: readonly FakeProviderName[] = ALL,
): Record<string, string> {
  const env: Record<string, string> = {};
  if (providers.includes('anthropic')) {
    env.ANTHROPIC_API_KEY = 'sk-ant-test';
    env.ANTHROPIC_BASE_URL = fake.anthropicBaseUrl;
  }
  if (providers.includes('openai')) {
    env.OPENAI_API_KEY = 'sk-openai-test';
    env.OPENAI_BASE_URL = fake.openaiBaseUrl;
  }
  if (providers.includes('openrouter')) {
    env.OPENROUTER_API_KEY = 'sk-or-test';
    env.OPENROUTER_BASE_URL = fake.openrouterBaseUrl;
  }
  return env;
}
