/**
 * @module The agent server app's public face: run `svc serve`, build its app, and the engine seam.
 */

export { type AgentAppDeps, createAgentApp } from './app.ts';
export { assembleAgentEngine, checkAgentSettings } from './assemble.ts';
export type { AgentEnv, AgentVariables } from './env.ts';
export {
  type AgentEngine,
  type AgentRuntime,
  type AgentServices,
  type CreateEngine,
  DEFAULT_SERVE_PORT,
  type RunAgentServerOptions,
  resolveServeHost,
  runAgentServer,
  SHUTDOWN_GRACE_MS,
  servePortOf,
} from './server.ts';
