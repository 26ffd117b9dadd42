/**
 * @module What the routing engine is told about one request, and what it is given to decide with.
 * Small on purpose so the gateway pipeline and the agent loop both build it cheaply.
 */
import type { Decimal } from '../lib/decimal.ts';
import type { ModelRegistry } from '../models/registry.ts';
import type { CompiledPolicy } from './compile-policy.ts';
import type { RequestFingerprint } from './pattern/fingerprint.ts';
import type { PatternMatch } from './pattern/table.ts';

export const POLICY_NAMES = [
  'per_message_override',
  'manual_sticky',
  'rule',
  'pattern',
  'delegate_request',
  'workspace_default',
  'global_default',
] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

export const VALIDATION_FAILURES = [
  'model_not_configured',
  'provider_unavailable',
  'model_not_allowed',
  'missing_capability',
  'context_too_small',
] as const;
export type ValidationFailure = (typeof VALIDATION_FAILURES)[number];

export interface RouteFacts {
  /** The `model` field as the client sent it; null when absent (agent turns). */
  requestedModel: string | null;
  hasImages: boolean;
  hasTools: boolean;
  /** Names of the request's tools (the structural fingerprint's tool set); absent means none. */
  toolNames?: readonly string[];
  /** Messages in the request (the structural fingerprint's message-count bucket); absent means 0. */
  messageCount?: number;
  /** Estimated input tokens of the whole request. */
  estimatedInputTokens: number;
  /**
   * Agent turns: the estimate of the smallest request the turn can send (its history windowed down to the
   * current message, agent/sessions/history-window.ts); the context check reads it instead when set.
   */
  smallestInputTokens?: number;
  /**
   * The request's `anthropic-beta` values (an Anthropic client's); a model's long-context window is used
   * when they name its beta (models/long-context.ts). Absent: none.
   */
  anthropicBetas?: readonly string[];
  /** The request's max_tokens, when given; counted against the context window. */
  maxOutputTokens?: number | null;
  /** Text for `text_matches` (e.g. the last user message); a function is called at most once. */
  text?: string | (() => string);
  /** The key's workspace_path (gateway) or the session's workspace (agent). */
  workspacePath: string | null;
  /** Slot 2: the session's pinned model; null for gateway traffic. */
  manualStickyModel?: string | null;
  /** Slot 5: the model a delegating planner asked for; null for gateway traffic. */
  delegateModel?: string | null;
  /** A worker turn (a planner delegated it, naming a model or not): only can_delegate models serve it. */
  workerTurn?: boolean;
}

/** Hooks for the pluggable slots; each returns a model reference (or a learned match) or null (no_match). */
export interface SlotHooks {
  manualSticky?: (facts: RouteFacts) => string | null;
  /** Slot 4: the learned table's answer for this request's fingerprint (routing/pattern/). */
  pattern?: (facts: RouteFacts, fingerprint: RequestFingerprint) => PatternMatch | null;
  delegateRequest?: (facts: RouteFacts) => string | null;
}

export interface RouteContext {
  policy: CompiledPolicy;
  registry: ModelRegistry;
  /** Adapters whose provider key is set (spec 1 §What the service does, item 4). */
  availableAdapters: ReadonlySet<string>;
  /** The key's allowed_models; null or absent means every model. */
  allowedModels?: ReadonlySet<string> | null;
  /** USD spent since 00:00 UTC today (spec 3 item 5); read only by `cost_today_above`. */
  costTodayUsd?: () => Decimal | string;
  hooks?: SlotHooks;
}

/** Per-request view the compiled `when` predicates read; lazy parts are computed at most once. */
export interface PredicateEnv {
  facts: RouteFacts;
  text(): string;
  /** The request's fingerprints (routing/pattern/fingerprint.ts), recorded on route.decided. */
  fingerprint(): RequestFingerprint;
  costToday(): Decimal;
}
