/**
 * @module The analytics app's public face: per-user export and forget (the agent server's HTTP
 * endpoints and the command line both wrap these), the identity guard and time windows.
 */
export { assertIdentityId, assertUserId, IDENTITY_ID_RE, isIdentityId } from './identity.ts';
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
