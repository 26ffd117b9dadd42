/**
 * @module The contract of a workspace tool (issue 10 "Tools"): its model-facing definition, whether it
 * needs the user's confirmation, and how it runs. The agent loop knows tools only through this file.
 */
import type { ToolErrorClass } from '../../events/catalog.ts';

/** The closed tool set of the agent server, in the order the model sees them. */
export const TOOL_NAMES = [
  'read_file',
  'list_files',
  'search_files',
  'write_file',
  'edit_file',
  'run_command',
  'delegate',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export interface ToolContext {
  /** The session's workspace directory: its real path, fixed when the session was created (workspace-roots.ts). */
  workspace: string;
  /** Aborts on turn cancel or turn timeout: stop at once (kill the process group for run_command). */
  signal: AbortSignal;
  /** Environment for child processes, already stripped of provider keys and svc secrets. */
  childEnv: NodeJS.ProcessEnv;
}

/** What goes back to the model as the tool result; a failure is a result too (DECISIONS §3 classes). */
export type ToolResult =
  | { ok: true; output: string; truncated?: boolean }
  | {
      ok: false;
      error_class: ToolErrorClass;
      /** One or two sentences: the tool.failed event's `message` and the start of the model's result. */
      message: string;
      /** What the tool printed before it failed (a timed-out command's output): for the model only. */
      output?: string;
    };

export interface WorkspaceTool {
  name: ToolName;
  /** One or two sentences for the model. */
  description: string;
  /** JSON schema (type object) of the input, as sent to the model. */
  input_schema: Record<string, unknown>;
  /** write_file, edit_file, run_command: the user must allow each run (or the session scope). */
  needsConfirmation: boolean;
  /** Read-only tools may run in worker sessions without the planner's session approval. */
  readOnly: boolean;
  /** Validates `input` (valibot) and runs; never throws for a tool-level failure. */
  run(input: unknown, ctx: ToolContext): Promise<ToolResult>;
  /**
   * Tools that ask first: the failure the call meets before it changes anything (its input, its path), or
   * null. The dispatcher runs it before asking, so a call that cannot run is never put to the user; `run`
   * checks again (the workspace may change while the user decides).
   */
  check?(input: unknown, ctx: ToolContext): Promise<ToolFailure | null>;
}

export type ToolFailure = Extract<ToolResult, { ok: false }>;
