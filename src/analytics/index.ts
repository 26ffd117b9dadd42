/**
 * @module The analytics app's public face: the /analytics routes `svc serve` mounts, the query functions
 * the report commands call in-process, per-user export and forget, the identity guard and time windows.
 */

export { type DashboardOptions, mountDashboard } from './dashboard/routes.ts';
export { type AnalyticsEnvelope, envelope } from './envelope.ts';
export { assertIdentityId, assertUserId, IDENTITY_ID_RE, isIdentityId } from './identity.ts';
export { exactMoneyText, stringifyAnswer } from './money.ts';
export * from './params.ts';
export { type ByKeyRow, queryByKey } from './queries/by-key.ts';
export { type ByTeamRow, queryByTeam } from './queries/by-team.ts';
export { type CacheEffectivenessRow, queryCacheEffectiveness } from './queries/cache-effectiveness.ts';
export { type CostQuery, type CostRow, queryCost } from './queries/cost.ts';
export { queryReliability, type ReliabilityData } from './queries/reliability.ts';
export { queryRouting, type RoutingData } from './queries/routing.ts';
export { defaultBaseline, querySavings, resolveBaseline, type SavingsData } from './queries/savings.ts';
export { querySessions, type SessionSummary } from './queries/sessions.ts';
export { queryTurn, type TurnDrillDown } from './queries/turn.ts';
export { type AnalyticsDeps, mountAnalyticsRoutes } from './routes.ts';
export {
  countUserEvents,
  EXPORT_FIELDS,
  type ExportSink,
  encodeExportLine,
  readUserEventPages,
  runUserExport,
  type UserExportDeps,
  type UserExportRequest,
  type UserExportSummary,
} from './user-data/export.ts';
export {
  type ForgetPreview,
  type ForgetUserDeps,
  type ForgetUserResult,
  previewForgetUser,
  runForgetUser,
  USER_ID_LOCATIONS,
} from './user-data/forget.ts';
export { PSEUDONYM_PREFIX, pseudonymFor } from './user-data/pseudonym.ts';
export { formatWindow, resolveWindow, type TimeWindow, type WindowInput } from './window.ts';
