/**
 * @module The built-in routing.yaml: the hardcoded defaults of spec 2 §What the service does, item 5.
 * It names no model, so it stays valid with any models.yaml: tiers come from the registry's
 * `fast`/`balanced`/`deep` aliases and slot 7 from SVC_GATEWAY_GLOBAL_DEFAULT or the built-in id.
 */

export const DEFAULT_POLICY_SOURCE = 'built-in routing.yaml';

export const DEFAULT_POLICY_YAML = `# svc built-in routing policy
rules: []
workspaces: []
pattern:
  enabled: false
`;
