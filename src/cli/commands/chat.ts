import { defineCommand } from 'citty';
import { DEFAULT_SERVE_PORT, servePortOf } from '../../agent/serve-port.ts';
import { readEnv } from '../../config/env.ts';
import { SvcError } from '../../lib/errors.ts';
import { withoutUserinfo } from '../../lib/url-userinfo.ts';

export default defineCommand({
  meta: {
    name: 'chat',
    description: 'Chat with the agent server from the terminal (one prompt per line when stdin is piped)',
  },
  args: {
    workspace: { type: 'string', description: 'Folder of a new session (default: the current directory)' },
    session: { type: 'string', description: 'Resume this session (sess_…) instead of creating one' },
    model: { type: 'string', description: 'Model id, alias or tier for the session' },
    server: {
      type: 'string',
      description: `Agent server URL (default http://127.0.0.1:${DEFAULT_SERVE_PORT}, or SVC_SERVE_PORT's port)`,
    },
  },
  async run({ args }) {
    const env = readEnv();
    // an empty value (--model "", an unset shell variable) is a usage error, not the default it would fall to
    for (const flag of ['workspace', 'session', 'model', 'server'] as const)
      if (args[flag] !== undefined && args[flag].trim() === '')
        throw new SvcError('usage_error', { message: `Option --${flag} of svc chat needs a value.` });
    // a resumed session keeps the folder it was created on: a --workspace beside --session would be ignored
    if (args.session !== undefined && args.workspace !== undefined)
      throw new SvcError('usage_error', {
        message:
          '--workspace and --session cannot be used together: --session resumes a session on the folder it was created on; pass one of them.',
      });
    const { runChat } = await import('../chat/run-chat.ts'); // ws and the HTTP client: only when it runs
    process.exitCode = await runChat({
      server: args.server === undefined ? `http://127.0.0.1:${servePortOf(env)}` : serverUrl(args.server),
      workspace: args.workspace ?? process.cwd(),
      session: args.session,
      model: args.model,
      input: process.stdin,
      output: process.stdout,
    });
  },
});

/**
 * --server must be an http(s) URL: anything else is a usage error (exit 2), not an unreachable server. A user
 * name or password in it is one too: svc serve takes no credentials and svc chat sends none (its HTTP client
 * refuses such a URL, which read as "Cannot reach" with the password in the sentence). No sentence shows them.
 */
function serverUrl(text: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {}
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw new SvcError('usage_error', {
      message: `--server must be the agent server's http:// URL (e.g. http://127.0.0.1:${DEFAULT_SERVE_PORT}), not "${withoutUserinfo(text)}".`,
    });
  if (url.username !== '' || url.password !== '')
    throw new SvcError('usage_error', {
      message: `--server must not carry a user name or password ("${withoutUserinfo(text)}"): svc serve takes no credentials and svc chat sends none; pass its http://host:port.`,
    });
  return text;
}
