/**
 * @module The environment a workspace command runs with: the server's own minus provider keys, svc's
 * settings and the trace store's PostgreSQL password, so a command the model writes cannot read (and leak) a
 * secret the server holds.
 */

/**
 * Names never passed to a child: provider variables, any *_API_KEY, every SVC_* setting, and PGPASSWORD (the
 * README's way to keep the store's password out of SVC_DATABASE_URL, which node-postgres reads from here).
 */
export const STRIPPED = /^(ANTHROPIC_|OPENAI_|OPENROUTER_|SVC_)|_API_KEY$|^PGPASSWORD$/i;

/** A copy of `env` without provider keys and svc secrets (ToolContext.childEnv). */
export function childEnvFrom(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !STRIPPED.test(name)) out[name] = value;
  }
  return out;
}
