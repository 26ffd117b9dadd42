/**
 * @module The real path each session's tools are confined to: the session row's workspace_root, its
 * workspace's real path when it was created (a worker's is its planner's), so a workspace folder later
 * replaced by a symlink to another place does not move the session there, across restarts too
 * (workspace-path.ts refuses every path then). A row written before that column (null) is resolved when
 * this process first meets the session and pinned in memory until the session ends.
 */
import { realpath } from 'node:fs/promises';
import type { SessionRow } from '../../store/schema.ts';

export interface WorkspaceRoots {
  /** The session's root (for an older row: pinned on the first call, its workspace_path when unresolvable). */
  of(
    session: Pick<SessionRow, 'id' | 'workspace_path' | 'workspace_root' | 'parent_session_id'>,
  ): Promise<string>;
  /** The session ended: its pinned root, if any, is let go. */
  forget(sessionId: string): void;
}

export function createWorkspaceRoots(): WorkspaceRoots {
  const roots = new Map<string, string>();
  return {
    async of(session) {
      if (session.workspace_root !== null) return session.workspace_root;
      const pinned = roots.get(session.id);
      if (pinned !== undefined) return pinned;
      const planner = session.parent_session_id === null ? undefined : roots.get(session.parent_session_id);
      const root = planner ?? (await realpath(session.workspace_path).catch(() => session.workspace_path));
      // two first calls at once pin the same answer: the first one stored wins
      if (!roots.has(session.id)) roots.set(session.id, root);
      return roots.get(session.id)!;
    },
    forget(sessionId) {
      roots.delete(sessionId);
    },
  };
}
