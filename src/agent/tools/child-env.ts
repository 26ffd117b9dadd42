/**
 * @module The environment a workspace command runs with: the server's own minus provider keys and svc's
 * settings, so a command the model writes cannot read (and leak) a key the server holds.
 */

/** Names never passed to a child: provider variables, any *_API_KEY, and every SVC_* setting. */
const STRIPPED = /^(ANTHROPIC_|OPENAI_|OPENROUTER_|SVC_)|_API_KEY$/i;

/** A copy of `env` without provider keys and svc secrets (ToolContext.childEnv). */
export function childEnvFrom(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !STRIPPED.test(name)) out[name] = value;
  }
  return out;
}
