/**
 * The whole gateway path for e2e tests: the fake provider (in this test process, so a test can script it
 * and read what it received), a private keystore and trace store, one issued key, and the real `svc
 * gateway` child process pointed at the fake through ANTHROPIC_/OPENAI_/OPENROUTER_BASE_URL.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
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
  /** Official SDK clients authenticated with `token` (no SDK retries, so attempts are the gateway's). */
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
  return {
    fake,
    gw,
    files,
    token: first.token,
    keyId: first.keyId,
    anthropic: new Anthropic({ apiKey: first.token, baseURL: gw.url, maxRetries: 0 }),
    openai: new OpenAI({ apiKey: first.token, baseURL: `${gw.url}/v1`, maxRetries: 0 }),
    issue: (args = []) => issueKey(files.env, args),
    async stop() {
      await gw.stop();
      await fake.close();
      tmp.cleanup();
    },
  };
}
