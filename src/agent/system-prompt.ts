/**
 * @module The system prompt of an agent turn (issue 10 "The agent loop"): it names the workspace and the
 * tools, says how paths and confirmations work, and appends the workspace's AGENTS.md when present.
 */
import { constants } from 'node:fs';
import { openRegular } from './tools/file-io.ts';
import { isFailure } from './tools/result.ts';
import type { WorkspaceTool } from './tools/tool.ts';
import { resolveWorkspacePath } from './tools/workspace-path.ts';

/** AGENTS.md beyond this many bytes is cut (the whole history goes to the model on every call). */
export const AGENTS_MD_MAX_BYTES = 32 * 1024;

export async function buildSystemPrompt(
  workspace: string,
  /** The real path the tools are confined to (sessions/workspace-roots.ts); AGENTS.md is read there. */
  root: string,
  tools: readonly WorkspaceTool[],
  worker: boolean,
): Promise<string> {
  const lines = [
    `You are a coding agent working in the workspace directory ${workspace}.`,
    'Every path you give a tool is relative to that directory; paths outside it are refused.',
    // a worker is not offered delegate (turn-request.ts): name only what the model can call
    `Tools: ${tools
      .filter((t) => !worker || t.name !== 'delegate')
      .map((t) => t.name)
      .join(', ')}.`,
    'Tools that change files or run commands may need the user to confirm them; a denied call comes back as an error result.',
    worker
      ? 'You are a worker session doing one delegated task: finish it and answer with the result as text.'
      : 'Use delegate to hand a self-contained sub-task to a worker model when that helps.',
  ];
  const agents = await readAgentsMd(root);
  if (agents) lines.push('', 'Instructions from the workspace AGENTS.md:', agents);
  return lines.join('\n');
}

// --- internal ---

/**
 * AGENTS.md as the tools read a workspace file (confined to the workspace, symlinks resolved, a regular file
 * opened without blocking), and only its first AGENTS_MD_MAX_BYTES bytes; null when there is none to read.
 */
async function readAgentsMd(workspace: string): Promise<string | null> {
  const target = await resolveWorkspacePath(workspace, 'AGENTS.md');
  if (isFailure(target) || !target.exists) return null;
  try {
    const { fh } = await openRegular(target.real, constants.O_RDONLY);
    try {
      const buf = Buffer.alloc(AGENTS_MD_MAX_BYTES + 1);
      let n = 0;
      while (n < buf.length) {
        const { bytesRead } = await fh.read(buf, n, buf.length - n, null);
        if (bytesRead === 0) break;
        n += bytesRead;
      }
      const text = buf.subarray(0, Math.min(n, AGENTS_MD_MAX_BYTES)).toString('utf8');
      return n > AGENTS_MD_MAX_BYTES ? `${text}\n[AGENTS.md was cut at ${AGENTS_MD_MAX_BYTES} bytes]` : text;
    } finally {
      await fh.close();
    }
  } catch {
    return null;
  }
}
