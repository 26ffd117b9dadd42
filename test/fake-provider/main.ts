/**
 * `npm run fake-provider [-- --port N]`: the fake provider on its own, so the gateway can be tried end to end
 * with no provider account and no network. Port: --port, else FAKE_PROVIDER_PORT, else 8499.
 */

import { startFakeProvider } from './server.ts';

const DEFAULT_PORT = 8499;

const port = resolvePort(process.argv.slice(2), process.env.FAKE_PROVIDER_PORT);
const fake = await startFakeProvider({ port });

process.stdout.write(
  [
    `fake provider listening on ${fake.url}`,
    '',
    'Point the gateway (or any SDK) at it; any non-empty key is accepted:',
    `  ANTHROPIC_BASE_URL=${fake.anthropicBaseUrl}   ANTHROPIC_API_KEY=sk-ant-fake`,
    `  OPENAI_BASE_URL=${fake.openaiBaseUrl}   OPENAI_API_KEY=sk-fake`,
    `  OPENROUTER_BASE_URL=${fake.openrouterBaseUrl}   OPENROUTER_API_KEY=sk-or-fake`,
    '',
    'Script a reply from the prompt, e.g. "hi [[fake:tool_call]]" or "[[fake:error=429;retry-after=1]]".',
    'Ctrl-C stops it.',
    '',
  ].join('\n'),
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void fake.close().then(() => process.exit(0));
  });
}

// --- internal ---

function resolvePort(args: string[], fromEnv: string | undefined): number {
  const flag = args.findIndex((arg) => arg === '--port' || arg.startsWith('--port='));
  const raw = flag < 0 ? fromEnv : args[flag].includes('=') ? args[flag].split('=')[1] : args[flag + 1];
  if (raw === undefined || raw === '') return DEFAULT_PORT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    process.stderr.write(`fake-provider: invalid port '${raw}'\n`);
    process.exit(2);
  }
  return n;
}
