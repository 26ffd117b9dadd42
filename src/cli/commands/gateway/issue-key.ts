import { resolve } from 'node:path';
import { defineCommand } from 'citty';
import { PROVIDERS } from '../../../adapters/names.ts';
import { IDENTITY_ID_RE } from '../../../analytics/identity.ts';
import { readEnv } from '../../../config/env.ts';
import { runIssueKey } from '../../../gateway/key-admin.ts';
import { isDecimalString } from '../../../lib/decimal.ts';
import { isSvcError, SvcError } from '../../../lib/errors.ts';
import { loadModelRegistry, type ModelRegistry } from '../../../models/registry.ts';
import { suggestModel } from '../../../models/suggest-model.ts';
import { configFileFlagsOf } from '../../config-flags.ts';
import { keystoreArgs, printTokenLines, withKeyAdmin } from './common.ts';

export default defineCommand({
  meta: { name: 'issue-key', description: 'Issue a gateway key (prints the token once)' },
  args: {
    name: { type: 'string', required: true, description: 'Label: tenant, environment or feature' },
    workspace: { type: 'string', required: true, description: 'Workspace folder the key is scoped to' },
    'allow-model': {
      type: 'string',
      description: 'Canonical model id the key may use (repeat, or comma-separate; default: any model)',
    },
    'daily-cap-usd': { type: 'string', description: 'Daily spend cap in USD (decimal)' },
    'monthly-cap-usd': { type: 'string', description: 'Monthly spend cap in USD (decimal)' },
    user: { type: 'string', description: 'User tag: 1 to 200 letters, digits, _ or - (usr_alice)' },
    team: { type: 'string', description: 'Team tag: 1 to 200 letters, digits, _ or - (team_core)' },
    models: {
      type: 'string',
      description:
        'models.yaml the --allow-model ids are checked in (default SVC_MODELS, else the built-in table)',
    },
    ...keystoreArgs,
  },
  async run({ args, rawArgs }) {
    const input = {
      name: nonEmpty(args.name, '--name', 'a label such as the tenant, environment or feature'),
      workspace_path: resolve(nonEmpty(args.workspace, '--workspace', 'the folder the key is scoped to')),
      allowed_models: allowedModels(rawArgs),
      daily_cap_usd: cap(args['daily-cap-usd'], '--daily-cap-usd'),
      monthly_cap_usd: cap(args['monthly-cap-usd'], '--monthly-cap-usd'),
      user_id: identityTag(args.user, '--user'),
      team_id: identityTag(args.team, '--team'),
    };
    const unknown = unknownModels(input.allowed_models, args.models);
    const { record, token } = await withKeyAdmin(args, (deps) => runIssueKey(input, deps));
    for (const line of unknown) process.stderr.write(`svc: warning: ${line}\n`);
    await printTokenLines(
      [
        ['key_id', record.key_id],
        ['token', token],
      ],
      (code) =>
        `Key ${record.key_id} was issued, but its token could not be written to standard output (${code}), and it is shown only once; revoke the key with \`svc gateway revoke-key ${record.key_id}\` and issue another where the output can be read.`,
    );
  },
});

// --- internal ---

/** Every `--allow-model` value (citty keeps only the last one of a repeated flag). */
function allowedModels(rawArgs: string[]): string[] | undefined {
  const values: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i];
    if (a === '--allow-model' || a === '--allowModel') values.push(rawArgs[++i] ?? '');
    else if (a.startsWith('--allow-model=')) values.push(a.slice('--allow-model='.length));
  }
  const ids = values.flatMap((v) => v.split(',')).map((s) => s.trim());
  for (const id of ids) {
    const adapter = /^([a-z0-9][a-z0-9_-]*):\S+$/.exec(id)?.[1];
    if (!adapter || !(PROVIDERS as readonly string[]).includes(adapter)) {
      throw new SvcError('usage_error', {
        message: `--allow-model "${id}" is not a canonical model id; use <adapter>:<model> with adapter ${PROVIDERS.join(', ')}, for example anthropic:claude-sonnet-4-5.`,
      });
    }
  }
  return ids.length ? ids : undefined;
}

/**
 * What to say of allowed models the registry (--models, SVC_MODELS, else the built-in table) does not hold:
 * a typo would leave the key allowed a model no request reaches, so each is named with the nearest id. Said,
 * not refused: the gateway the key is for may read another models.yaml than this command was given.
 */
function unknownModels(ids: string[] | undefined, modelsFlag: string | undefined): string[] {
  if (ids === undefined) return [];
  const { modelsPath } = configFileFlagsOf({ models: modelsFlag });
  const path = modelsPath ?? readEnv().models;
  let registry: ModelRegistry;
  try {
    registry = loadModelRegistry(path);
  } catch (err) {
    // SVC_MODELS may name the gateway's file, absent where keys are issued: the ids go unchecked, as before
    // the check; a --models flag asked for it, so its file failing is the command's error
    if (modelsPath !== undefined || !isSvcError(err)) throw err;
    return [
      `the --allow-model ids were not checked against SVC_MODELS, and the key allows them as given: ${err.message}`,
    ];
  }
  return ids
    .filter((id) => !registry.get(id))
    .map((id) => {
      const guess = nearestId(id, registry);
      return `--allow-model "${id}" is not a model of ${registry.source}${guess ? ` (did you mean ${guess}?)` : ''}; the key allows it, but a gateway using that table never serves it: check the id, or issue keys with the --models or SVC_MODELS the gateway uses.`;
    });
}

/** The canonical id `id` most likely means (an alias it is near stands for its model). */
function nearestId(id: string, registry: ModelRegistry): string | undefined {
  const guess = suggestModel(id, registry);
  return guess === undefined ? undefined : registry.resolve(guess)?.id;
}

/** A required value that says something: an empty or blank one is a usage error, not a key labelled "". */
function nonEmpty(value: string, flag: string, what: string): string {
  if (value.trim() === '')
    throw new SvcError('usage_error', { message: `${flag} must not be empty: give ${what}.` });
  return value;
}

/**
 * A tag lands in every event of the key; outside spec 3's identity guard no analytics filter, export or
 * forget could ever name it, so it is refused here.
 */
function identityTag(value: string | undefined, flag: string): string | undefined {
  if (value === undefined || IDENTITY_ID_RE.test(value)) return value;
  const shown = JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  throw new SvcError('usage_error', {
    message: `${flag} ${shown} is not a valid tag: use 1 to 200 letters, digits, "_" or "-".`,
  });
}

function cap(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (!isDecimalString(value.trim()) || value.trim().startsWith('-')) {
    throw new SvcError('usage_error', {
      message: `${flag} must be a non-negative decimal amount in USD such as 25 or 12.50, not "${value}".`,
    });
  }
  return value.trim();
}
