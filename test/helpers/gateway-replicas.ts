/**
 * N `svc gateway` processes on one PostgreSQL database, as replicas behind a load balancer would run:
 * one fake provider, keys issued into the database by the real key commands, and a store handle for SQL.
 */

import { openStore, type Store } from '#src/store/open.ts';
import { fakeProviderEnv } from '../fake-provider/provider-env.ts';
import { type RunningFakeProvider, startFakeProvider } from '../fake-provider/server.ts';
import { issueKey } from './gateway-keys.ts';
import { isolatedEnv, makeTempDir, type RunningSvc, startSvc } from './svc.ts';

export interface GatewayReplicas {
  fake: RunningFakeProvider;
  env: NodeJS.ProcessEnv;
  replicas: RunningSvc[];
  /** The database, for checking events with SQL. */
  store: Store;
  issue(args?: string[]): Promise<{ keyId: string; token: string }>;
  /** Starts one more replica (appended to `replicas`). */
  add(): Promise<RunningSvc>;
  stop(): Promise<void>;
}

export async function startGatewayReplicas(
  databaseUrl: string,
  count: number,
  extraEnv: Record<string, string | undefined> = {},
): Promise<GatewayReplicas> {
  const fake = await startFakeProvider();
  const home = makeTempDir('svc-replicas-');
  const env = isolatedEnv(home.dir, {
    SVC_DATABASE_URL: databaseUrl,
    ...fakeProviderEnv(fake, ['anthropic', 'openai']),
    ...extraEnv,
  });
  const replicas: RunningSvc[] = [];
  const store = await openStore({ engine: 'postgres', url: databaseUrl });
  const stop = async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await store.close();
    await fake.close();
    home.cleanup();
  };
  const add = async () => {
    const gw = await startSvc(['gateway', '--port', '{port}'], { env });
    replicas.push(gw);
    return gw;
  };
  try {
    await issueKey(env); // the gateway refuses to start without a key
    for (let i = 0; i < count; i++) await add();
  } catch (err) {
    await stop();
    throw err;
  }
  return { fake, env, replicas, store, issue: (args = []) => issueKey(env, args), add, stop };
}
