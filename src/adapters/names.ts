/**
 * @module The provider set of DECISIONS §1, declared once: adapters, models.yaml validation, metric labels
 * and routing all derive from it.
 */

export const PROVIDERS = ['anthropic', 'openai', 'openrouter'] as const;
export type AdapterName = (typeof PROVIDERS)[number];
