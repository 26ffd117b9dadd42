/**
 * The fake provider as a benchmark process: like `npm run fake-provider`, but it forgets the requests it
 * records (a long run would otherwise hold every body in memory) and prints `ready` once listening.
 * Usage: node test/bench/fake-upstream.ts <port>
 */
import { startFakeProvider } from '../fake-provider/server.ts';

const fake = await startFakeProvider({ port: Number(process.argv[2] ?? 0) });
setInterval(() => {
  fake.requests.length = 0;
}, 500).unref();
process.stdout.write(`ready ${fake.url}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void fake.close().then(() => process.exit(0));
  });
}
