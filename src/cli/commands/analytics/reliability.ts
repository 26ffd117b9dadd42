/** `svc analytics reliability`: classified failures and latency percentiles (GET /analytics/reliability). */
import { queryReliability } from '../../../analytics/index.ts';
import { defineReport } from './common.ts';

export default defineReport({
  name: 'reliability',
  description: 'Failures by model and error class, and p50/p95 latency per model, in the window',
  windowed: true,
  args: {},
  read: ({ store, window }) => queryReliability(store.kysely, window),
  table: (d) => ({
    header: ['KIND', 'MODEL', 'PROVIDER', 'ERROR_CLASS', 'COUNT', 'P50_MS', 'P95_MS'],
    rows: [
      ...d.errors_by_class.map((e) => ['errors', e.model, e.provider, e.error_class, e.count, null, null]),
      ...d.latency_ms_by_model.map((l) => ['latency', l.model, null, null, l.sample_size, l.p50, l.p95]),
    ],
  }),
});
