/**
 * The whole gateway path for e2e tests: the fake provider (in this test process, so a test can script it
 * and read what it received), a private keystore and trace store, one issued key, and the real `svc
 * gateway` child process pointed at the fake through ANTHROPIC_/OPENAI_/OPENROUTER_BASE_URL.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { type FakeProviderName, fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { type RunningFakeProvider, startFakeProvider } from '../fake-provider/server.ts';
import { type GatewayFiles, gatewayFiles, issueKey } from './gateway-keys.ts';
import { makeTempDir, type RunningSvc, startSvc } from './svc.ts';

export interface GatewayStack {
  fake: RunningFakeProvider;
  gw: RunningSvc;
  files: GatewayFiles;
  /** The first issued key. */
  token: string;
  keyId: string;
  /**
   * Official SDK clients authenticated with `token` (no SDK retries, so attempts are the gateway's), made
   * at first use: loading each SDK costs ~0.2 s of CPU, and half the files using the stack never call one.
   */
  anthropic: Anthropic;
  openai: OpenAI;
  /** Issues another key against the same keystore (the running gateway picks it up). */
  issue(args?: string[]): Promise<{ keyId: string; token: string }>;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Extra `issue-key` arguments for the first key (caps, allowed models, user and team). */
  keyArgs?: string[];
  /** Extra environment for the gateway (SVC_GATEWAY_* tuning). */
  env?: Record<string, string | undefined>;
  /** Which providers get a key (default all three). */
  providers?: FakeProviderName[];
}

export async function startGatewayStack(options: StackOptions = {}): Promise<GatewayStack> {
  const fake = await startFakeProvider();
  const tmp = makeTempDir('svc-gw-');
  const files = gatewayFiles(tmp.dir, {
    ANTHROPIC_API_KEY: undefined, // not gatewayFiles' own key: Anthropic has a key only when named
    ...fakeProviderEnv(fake, options.providers),
    ...options.env,
  });
  let first: { keyId: string; token: string };
  let gw: RunningSvc;
  try {
    // a failed key issue (or build) must not leave the fake listening: the test file would never exit
    first = await issueKey(files.env, options.keyArgs ?? []);
    gw = await startSvc(['gateway', '--port', '{port}'], { env: files.env });
  } catch (err) {
    await fake.close();
    tmp.cleanup();
    throw err;
  }
  let anthropic: Anthropic | undefined;
  let openai: OpenAI | undefined;
  return {
    fake,
    gw,
    files,
    token: first.token,
    keyId: first.keyId,
    get anthropic() {
      const Sdk = sdk<typeof Anthropic>('@anthropic-ai/sdk');
      anthropic ??= new Sdk({ apiKey: first.token, baseURL: gw.url, maxRetries: 0 });
      return anthropic;
    },
    get openai() {
      const Sdk = sdk<typeof OpenAI>('openai');
      openai ??= new Sdk({ apiKey: first.token, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      return openai;
    },
    issue: (args = []) => issueKey(files.env, args),
    async stop() {
      await gw.stop();
      await fake.close();
      tmp.cleanup();
    },
  };
}

const require = createRequire(import.meta.url);

/**
 * An SDK's default export, loaded synchronously from the ES module file `import` resolves to: Node keeps one
 * instance of it, so a test's own `import ... from 'openai'` (APIError for instanceof) is the same module.
 */
function sdk<T>(name: string): T {
  return (require(fileURLToPath(import.meta.resolve(name))) as { default: T }).default;
}
