/**
 * @module The gateway app's public face: start the server, build the app, and the operator's key commands.
 */

export { createGatewayApp, type ExtraRoute, type GatewayAppDeps, resolveShape } from './app.ts';
export { assembleGateway, checkGatewaySettings } from './assemble.ts';
export type { GatewayEnv, GatewayVariables } from './env.ts';
export {
  type AuditSink,
  type KeyAdminDeps,
  type ListedKey,
  runIssueKey,
  runListKeys,
  runRevokeKey,
  runRotateKey,
  type UpdateKeystore,
} from './key-admin.ts';
export {
  createKeystoreCache,
  type KeystoreCache,
  readKeystoreFile,
  updateKeystoreFile,
} from './keystore/file.ts';
export { DEFAULT_GRACE_PERIOD, parseGracePeriod } from './keystore/grace-period.ts';
export type { KeyRecord, Keystore } from './keystore/keystore.ts';
export { createKeyTableCache, type KeyTableCache, updateKeyTable } from './keystore/table.ts';
export { DRAIN_MS, type GatewayExtensions, type GatewayRuntime, runGateway } from './server.ts';
