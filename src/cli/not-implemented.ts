import { SvcError } from '../lib/errors.ts';

/** For commands whose issue has not landed yet: exit 1 with one sentence (issue 2 §1). */
export function notImplemented(name: string): never {
  throw new SvcError('not_implemented', {
    message: `${name} is not implemented yet in this version of svc.`,
  });
}
