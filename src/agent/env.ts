import type { NodeBindings } from '../http/incoming.ts';

/** Hono variables of the agent server app (STYLE: typed per app, no global augmentation). */
export interface AgentVariables {
  /** Resolved `Svc-API-Version` (http/versioning.ts). */
  apiVersion: string;
}

export interface AgentEnv {
  Variables: AgentVariables;
  /** Node's request and response objects under @hono/node-server; absent under `app.fetch`. */
  Bindings: NodeBindings;
}
