/**
 * @module Loads routing.yaml and keeps the last known good policy when the file turns invalid
 * (spec 2 §What the service does, item 5): reports the spec 2 policy view, reloads on demand and
 * checks candidate text without applying it.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { errorMessage, SvcError } from '../lib/errors.ts';
import { createFolders } from '../lib/folders.ts';
import { sha256Hex } from '../lib/hash.ts';
import type { Logger } from '../lib/log.ts';
import { readRegularFile } from '../lib/regular-file.ts';
import { type Clock, formatUs, systemClock } from '../lib/time.ts';
import type { Tier } from '../models/model-schema.ts';
import type { ModelRegistry } from '../models/registry.ts';
import { suggestModel } from '../models/suggest-model.ts';
import { type CompiledPolicy, compilePolicyText, type PolicyCheck } from './compile-policy.ts';
import { DEFAULT_POLICY_SOURCE, defaultPolicyYaml } from './default-policy.ts';
import type { PatternFile, Predicate } from './policy-schema.ts';

/** GET /routing/policy (spec 2 §Routing policy view). */
export interface PolicyView {
  version: string;
  valid: boolean;
  loaded_at: string;
  source: string;
  global_default: string;
  tiers: Record<Tier, string | null>;
  rules: Array<{ name: string; when: Predicate | null; use: string }>;
  workspaces: Array<{ match: string; use: string }>;
  /** routing.yaml `pattern:` with its defaults filled in (README §Learned routing). */
  pattern: PatternFile;
  errors: string[];
  warnings: string[];
  using_last_known_good: boolean;
}

export interface PolicyStore {
  /** The policy in force (hot path: a field read). */
  current(): CompiledPolicy;
  view(): PolicyView;
  /** Re-reads the file; `version` is the SHA-256 of the bytes just read, `valid` their verdict. */
  reload(): { version: string; valid: boolean };
  /** Validates `yamlText`, or the on-disk file when absent, without applying it. */
  check(yamlText?: string): Pick<PolicyCheck, 'valid' | 'errors' | 'warnings'>;
  /** Calls `listener` after each reload (slot 4 rebuilds its table); returns the unsubscribe. */
  onReload(listener: () => void): () => void;
}

export interface LoadPolicyOptions {
  /** `--routing` / SVC_ROUTING_POLICY; undefined means the built-in policy. */
  path: string | undefined;
  registry: ModelRegistry;
  /** SVC_GATEWAY_GLOBAL_DEFAULT. */
  envGlobalDefault?: string;
  /** Where the last valid file is copied so an invalid file at the next start still has a fallback. */
  lastKnownGoodPath?: string;
  /** Reads the last known good copy but never writes it (`svc routing explain`). */
  readOnly?: boolean;
  log: Logger;
  clock?: Clock;
}

/** Never throws for a bad policy: an invalid file leaves the last known good (or built-in) in force. */
export function loadRoutingPolicy(opts: LoadPolicyOptions): PolicyStore {
  const clock = opts.clock ?? systemClock;
  const compileOpts = { registry: opts.registry, envGlobalDefault: opts.envGlobalDefault };
  const builtInText = defaultPolicyYaml(opts.registry);
  const builtIn = () => compilePolicyText(builtInText, DEFAULT_POLICY_SOURCE, compileOpts);
  let active: CompiledPolicy;
  let activeWarnings: string[] = [];
  let loadedAt = formatUs(clock.nowUs());
  let lastErrors: string[] = [];

  const attempt = (): { version: string; check: PolicyCheck } => {
    if (opts.path === undefined) {
      const check = builtIn();
      return { version: check.policy!.version, check };
    }
    const read = readPolicyFile(opts.path);
    if ('error' in read) return { version: '', check: { valid: false, errors: [read.error], warnings: [] } };
    return { version: sha256Hex(read.bytes), check: compilePolicyText(read.bytes, opts.path, compileOpts) };
  };

  /** An invalid file is logged with what keeps serving: the policy before this reload, a saved copy or the built-in one. */
  const apply = (check: PolicyCheck, kept = 'keeping the last known good policy'): boolean => {
    if (check.valid && check.policy) {
      active = check.policy;
      activeWarnings = check.warnings;
      loadedAt = formatUs(clock.nowUs());
      lastErrors = [];
      if (opts.path !== undefined && opts.lastKnownGoodPath && !opts.readOnly)
        saveLastKnownGood(opts, check.policy);
      for (const w of check.warnings)
        opts.log.warn('routing policy warning', { file: check.policy.source, warning: w });
      return true;
    }
    lastErrors = check.errors;
    opts.log.error(`routing policy invalid; ${kept}`, {
      file: opts.path,
      errors: check.errors,
      // as the `routing policy reloaded` line: the version that serves, and where it was read from
      in_force: active.version,
      in_force_source: active.source,
    });
    return false;
  };

  const listeners = new Set<() => void>();
  const first = attempt().check;
  // an invalid file at the first load, when nothing was in force yet: the saved copy of the last valid file
  // starts, else the built-in
  const starting = first.valid ? first : (restoreLastKnownGood(opts, compileOpts) ?? builtIn());
  refuseUnknownEnvGlobalDefault(starting.policy!, opts);
  if (first.valid) apply(first);
  else {
    active = starting.policy!;
    activeWarnings = starting.warnings;
    const builtInServes = active.source === DEFAULT_POLICY_SOURCE;
    apply(
      first,
      builtInServes ? 'serving the built-in policy' : 'serving the saved copy of the last valid file',
    );
    // what serves instead may warn too (its global default missing from models.yaml: every request 503)
    for (const w of starting.warnings)
      opts.log.warn('routing policy warning', { file: active.source, warning: w });
  }

  return {
    current: () => active,
    view: () => toView(active, activeWarnings, loadedAt, lastErrors),
    reload() {
      const { version, check } = attempt();
      const valid = apply(check);
      for (const listener of listeners) listener();
      return { version, valid };
    },
    check(yamlText) {
      const c =
        yamlText === undefined
          ? attempt().check
          : compilePolicyText(yamlText, opts.path ?? 'policy_yaml', compileOpts);
      return { valid: c.valid, errors: c.errors, warnings: c.warnings };
    },
    onReload(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

// --- internal ---

/**
 * SVC_GATEWAY_GLOBAL_DEFAULT naming nothing models.yaml knows refuses the start (exit 1), as a bad models.yaml
 * does: warned only, every request no alias, rule or workspace claimed got model_not_configured. Checked only
 * when the policy starting has no global_default of its own, which wins (the variable is then not used, as a
 * variable whose flag is given). A reload that brings such a policy is warned (compile-policy), never fatal.
 */
function refuseUnknownEnvGlobalDefault(policy: CompiledPolicy, opts: LoadPolicyOptions): void {
  const named = opts.envGlobalDefault;
  if (named === undefined || policy.file.global_default !== undefined) return;
  if (opts.registry.get(policy.globalDefault) !== undefined) return;
  const guess = suggestModel(named, opts.registry);
  throw new SvcError('startup_refused', {
    message: `SVC_GATEWAY_GLOBAL_DEFAULT must name a model id, alias or tier of ${opts.registry.source}, not "${named}"${guess ? ` (did you mean ${guess}?)` : ''}; fix or unset it and start svc again.`,
  });
}

function readPolicyFile(path: string): { bytes: Buffer } | { error: string } {
  try {
    return { bytes: readRegularFile(path) };
  } catch (err) {
    return { error: `cannot read the routing policy ${path}: ${errorMessage(err)}` };
  }
}

function saveLastKnownGood(opts: LoadPolicyOptions, policy: CompiledPolicy): void {
  const target = opts.lastKnownGoodPath!;
  try {
    const bytes = readRegularFile(policy.source); // the path may have become a FIFO since it was read
    if (sha256Hex(bytes) !== policy.version) return; // the file changed under us; keep the old copy
    createFolders(dirname(target), 'the last known good routing policy', 'check the config folder');
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, bytes);
    renameSync(tmp, target);
  } catch (err) {
    opts.log.warn('cannot save the last known good routing policy', {
      file: target,
      error: errorMessage(err),
    });
  }
}

function restoreLastKnownGood(
  opts: LoadPolicyOptions,
  compileOpts: { registry: ModelRegistry; envGlobalDefault?: string },
): PolicyCheck | undefined {
  if (!opts.lastKnownGoodPath) return undefined;
  const read = readPolicyFile(opts.lastKnownGoodPath);
  if ('error' in read) return undefined;
  const check = compilePolicyText(read.bytes, opts.lastKnownGoodPath, compileOpts);
  return check.valid ? check : undefined;
}

function toView(policy: CompiledPolicy, warnings: string[], loadedAt: string, errors: string[]): PolicyView {
  return {
    version: policy.version,
    valid: errors.length === 0,
    loaded_at: loadedAt,
    source: policy.source,
    global_default: policy.globalDefault,
    tiers: { ...policy.tiers },
    rules: policy.file.rules.map((r) => ({ name: r.name, when: r.when ?? null, use: r.use })),
    workspaces: policy.file.workspaces.map((w) => ({ match: w.match, use: w.use })),
    pattern: { ...policy.file.pattern, candidates: [...policy.file.pattern.candidates] },
    errors: [...errors],
    warnings: [...warnings],
    using_last_known_good: errors.length > 0,
  };
}
