/** `svc analytics by-team`: spend per team and user (GET /analytics/by_team). */
import { parseTeam, queryByTeam } from '../../../analytics/index.ts';
import { defineReport, fieldCell, flagName } from './common.ts';

export default defineReport({
  name: 'by-team',
  description: 'Spend per team (and per user) in the window',
  windowed: true,
  args: { team: { type: 'string', description: 'Only this team id' } },
  check: (raw) => parseTeam(raw, flagName),
  read: ({ store, raw, window }) => queryByTeam(store.kysely, { window, team: parseTeam(raw, flagName) }),
  table: (rows) => ({
    header: ['TEAM_ID', 'USER_ID', 'COST_USD', 'CALL_COUNT', 'USER_COUNT'],
    rows: rows.flatMap((t) => [
      [t.team_id ?? '(untagged)', '(all)', fieldCell(t, 'cost_usd'), t.call_count, t.user_count],
      ...t.by_user.map((u) => [
        t.team_id ?? '(untagged)',
        u.user_id ?? '(untagged)',
        fieldCell(u, 'cost_usd'),
        u.call_count,
        null,
      ]),
    ]),
  }),
});
