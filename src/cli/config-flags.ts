/**
 * @module `--models` and `--routing` of `svc gateway`, `svc serve`, `svc routing explain` and the
 * `svc analytics` reports (`--models` only): an empty value (an unset shell variable, `--routing "$POLICY"`)
 * names no file, so it is a usage error before anything starts, as `--db-path ''` is, rather than a start
 * on the built-in policy or a read of the file ''.
 */
import { requireFilePath } from './store-flags.ts';

export interface ConfigFileFlags {
  modelsPath: string | undefined;
  routingPath: string | undefined;
}

/** The two file flags of a command's parsed args, each undefined when left out. */
export function configFileFlagsOf(args: { models?: string; routing?: string }): ConfigFileFlags {
  return {
    modelsPath:
      args.models === undefined
        ? undefined
        : requireFilePath(
            args.models,
            '--models',
            '; leave it out to use SVC_MODELS or the built-in models.yaml',
          ),
    routingPath:
      args.routing === undefined
        ? undefined
        : requireFilePath(
            args.routing,
            '--routing',
            '; leave it out to use SVC_ROUTING_POLICY or the built-in policy',
          ),
  };
}
