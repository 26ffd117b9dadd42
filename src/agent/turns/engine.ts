/**
 * @module The contract between the agent server's REST routes and the turn machinery (submit, cancel,
 * confirm): routes validate input and map errors; the engine owns turns, the loop and confirmations.
 */
import type { ContentBlock } from '../../canonical/message.ts';

export interface SubmitTurnInput {
  sessionId: string;
  /** Canonical content blocks valid in a user message (already validated by the route). */
  content: ContentBlock[];
  /** Model id or alias for this turn only (slot 1); wins over an `@alias` prefix in the text. */
  perMessageOverride?: string | null;
}

export interface SubmittedTurn {
  turn_id: string;
  session_id: string;
  submitted_at: string;
  user_message_id: string;
}

export interface ConfirmInput {
  sessionId: string;
  turnId: string;
  requestId: string;
  decision: 'allow' | 'deny';
  scope: 'once' | 'session';
}

export interface TurnEngine {
  /** 202 body; throws SvcError session_not_found / session_already_ended / turn_in_flight / invalid_content. */
  submit(input: SubmitTurnInput): Promise<SubmittedTurn>;
  /**
   * Starts cancellation; throws session_not_found / turn_not_found / turn_already_completed (the routes
   * refuse an ended session first: DELETE cancels the turn of the session it has just ended). A second
   * cancel of a cancelling turn is a no-op (bus.handler_warning).
   */
  cancel(
    sessionId: string,
    turnId: string,
    reason?: string | null,
  ): Promise<{ turn_id: string; cancellation_initiated: true }>;
  /** First answer wins; the loser gets 409 confirmation_already_resolved with details.applied false. */
  confirm(input: ConfirmInput): Promise<{ request_id: string; decision: 'allow' | 'deny'; applied: boolean }>;
  /** PATCH /sessions/{id}: swap now, or queue until the running turn ends. */
  setActiveModel(
    sessionId: string,
    model: string | null,
  ): Promise<{ id: string; active_model: string; swap_queued: boolean; swap_queued_until_turn?: string }>;
  /** Turns running now (GET /health active_turns). */
  activeTurns(): number;
  /** DELETE /sessions/{id}: lets go of what the engine keeps for the ended session (its pinned root). */
  forgetSession?(sessionId: string): void;
  /**
   * Start, after the turns a dead process left open were freed: applies the model swaps PATCH queued for
   * their boundary (kept in the session row).
   */
  applyQueuedSwaps?(): Promise<void>;
  /** Shutdown: cancel every running turn and wait until each has published its end (bounded by the caller). */
  cancelAll(reason: string): Promise<void>;
}
