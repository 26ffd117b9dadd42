/** `svc analytics routing`: routing chain outcomes (GET /analytics/routing). */
import { queryRouting } from '../../../analytics/index.ts';
import { defineReport } from './common.ts';

export default defineReport({
  name: 'routing',
  description: 'Routing wins by policy and model, hard failures and rejections in the window',
  windowed: true,
  args: {},
  read: ({ store, window }) => queryRouting(store.kysely, window),
  table: (d) => ({
    header: ['KIND', 'POLICY_OR_MODEL', 'VALIDATION_FAILURE', 'COUNT'],
    rows: [
      ...d.wins_by_policy.map((w) => ['win by policy', w.policy, null, w.count]),
      ['hard failures', null, null, d.hard_failures],
      ...d.rejections.map((r) => ['rejection', r.policy, r.validation_failure, r.count]),
      ...d.wins_by_model.map((w) => ['win by model', w.chosen_model, null, w.count]),
    ],
  }),
});
