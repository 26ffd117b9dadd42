/**
 * @module SIGHUP re-reads routing.yaml on `svc gateway` and `svc serve`, the conventional reload signal
 * (the agent server also has POST /routing/reload). Without a listener Node dies of SIGHUP (exit 129), so an
 * operator reloading the gateway the usual way stopped it instead. A bad file keeps the policy in force
 * (load-policy.ts logs its errors).
 */
import { takeHeldHangup } from '../lib/hangup.ts';
import type { Logger } from '../lib/log.ts';
import type { PolicyStore } from './load-policy.ts';

/** Installs the SIGHUP listener; returns its removal. */
export function reloadPolicyOnSignal(policy: PolicyStore, log: Logger): () => void {
  const on = () => {
    const { version, valid } = policy.reload();
    log.info('routing policy reloaded', {
      signal: 'SIGHUP',
      version,
      valid,
      in_force: policy.view().version,
    });
  };
  process.on('SIGHUP', on);
  // one that came during the start (lib/hangup.ts held it) may name an edit the start did not read
  if (takeHeldHangup()) on();
  return () => {
    process.off('SIGHUP', on);
  };
}
