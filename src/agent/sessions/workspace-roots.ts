/**
 * @module The real path each session's tools are confined to, fixed when this process first meets the session
 * (its creation, or its first turn after a restart): a workspace folder later replaced by a symlink to another
 * place does not move the session there (workspace-path.ts refuses every path then). A worker session shares
 * its planner's root.
 */
import { realpath } from 'node:fs/promises';
import type { SessionRow } from '../../store/schema.ts';

export interface WorkspaceRoots {
  /** The session's root, pinned on the first call (its workspace_path as given when it cannot be resolved). */
  of(session: Pick<SessionRow, 'id' | 'workspace_path' | 'parent_session_id'>): Promise<string>;
}

export function createWorkspaceRoots(): WorkspaceRoots {
  const roots = new Map<string, string>();
  return {
    async of(session) {
      const pinned = roots.get(session.id);
      if (pinned !== undefined) return pinned;
      const planner = session.parent_session_id === null ? undefined : roots.get(session.parent_session_id);
      const root = planner ?? (await realpath(session.workspace_path).catch(() => session.workspace_path));
      // two first calls at once pin the same answer: the first one stored wins
      if (!roots.has(session.id)) roots.set(session.id, root);
      return roots.get(session.id)!;
    },
  };
}
