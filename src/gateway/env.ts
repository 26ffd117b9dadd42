import type { InboundShape } from '../events/catalog.ts';
import type { NodeBindings } from '../http/incoming.ts';
import type { ErrorCode } from '../lib/errors.ts';
import type { KeyRecord } from './keystore/keystore.ts';

/** Hono variables of the gateway app (STYLE: typed per app, no global augmentation). */
export interface GatewayVariables {
  /** The request's turn_id (ULID), also sent back as `svc-request-id` (DECISIONS §3). */
  requestId: string;
  /** Set on the provider-shape paths before authentication. */
  shape: InboundShape;
  /** The authenticated key (the one actually used, predecessor or successor); set by auth.ts. */
  gatewayKey: KeyRecord;
  /** The model the client asked for; the pipeline sets it so the request log can show it. */
  model: string;
  /** The registry model that served the request (also the `svc-routed-model` response header). */
  routedModel: string;
  /** The routing policy whose entry won (`rule`, `global_default`, …), for the request log. */
  routedBy: string;
  /** Hosted tools a translated Responses request went without (`svc-dropped-tools`), for the request log. */
  droppedTools: string;
  /** Request parameters a translated call was sent without (svc-dropped-params). */
  droppedParams: string;
  /** The answer's headers on a provider path, a plain object to the end (answer.ts); elsewhere `c.header`. */
  answerHeaders: Record<string, string>;
  /** The error code of a failed answer (its body's `code`), for the request log. */
  errorCode: ErrorCode;
  /** Resolved `Svc-API-Version` on the service-owned path /healthz (http/versioning.ts). */
  apiVersion: string;
}

export interface GatewayEnv {
  Variables: GatewayVariables;
  /** Node's request and response objects under @hono/node-server; absent under `app.fetch`. */
  Bindings: NodeBindings;
}
