import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createKeyCounts } from '#src/gateway/key-counts.ts';
import { readKeystoreFile } from '#src/gateway/keystore/file.ts';
import { silentLogger } from '#src/lib/log.ts';
import { createMetricsCollector } from '#src/metrics/collector.ts';
import { parseExposition, sampleOf } from '../../helpers/prometheus-exposition.ts';
import { makeTempDir } from '../../helpers/svc.ts';

const NOW_US = Date.parse('2026-11-22T12:00:00Z') * 1000;

function record(n: number, extra: Record<string, unknown> = {}) {
  return {
    key_id: `gk_01JZ0000000000000000000${String(n).padStart(3, '0')}`,
    secret_hash: String(n).padStart(64, '0'),
    name: `k${n}`,
    workspace_path: '/tmp',
    status: 'active',
    created_at: '2026-11-01T00:00:00.000000Z',
    ...extra,
  };
}

async function scrapeGauges(collector: ReturnType<typeof createMetricsCollector>) {
  const f = await parseExposition(await collector.scrape());
  return [sampleOf(f, 'svc_gateway_keys_active'), sampleOf(f, 'svc_gateway_keys_revoked')];
}

test('key gauges count by effective status at scrape time: a lapsed grace period counts as revoked', async (t) => {
  const tmp = makeTempDir();
  t.after(tmp.cleanup);
  const path = join(tmp.dir, 'keys.json');
  const keys = [
    record(1),
    record(2, { status: 'revoked', revoked_at: '2026-11-20T00:00:00.000000Z' }),
    record(3, { grace_period_until: '2026-11-22T11:00:00.000000Z' }), // lapsed an hour ago
    record(4, { grace_period_until: '2026-11-22T13:00:00.000000Z' }), // still in its window
  ];
  writeFileSync(path, JSON.stringify({ keys }));
  const counts = createKeyCounts(() => readKeystoreFile(path)?.keys ?? [], { nowUs: () => NOW_US });
  const collector = createMetricsCollector({
    role: 'gateway',
    log: silentLogger,
    gauges: { keysActive: counts.active, keysRevoked: counts.revoked },
  });
  assert.deepEqual(await scrapeGauges(collector), [2, 2]);

  // a keystore that turns unreadable keeps the last values
  writeFileSync(path, '{ not json');
  assert.deepEqual(await scrapeGauges(collector), [2, 2]);

  writeFileSync(path, JSON.stringify({ keys: [record(1)] }));
  assert.deepEqual(await scrapeGauges(collector), [1, 0]);
});
