/**
 * @module The TCP forwarder behind `svc forward` (the cluster chart's sidecar).
 */
export { assertReachableTarget, formatHostPort, type HostPort, parseHostPort } from './address.ts';
export { createForwarder, type Forwarder, type ForwarderOptions } from './forward.ts';
export { FORWARD_DRAIN_MS, type RunForwardOptions, runForward } from './run.ts';
