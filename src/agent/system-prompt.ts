/**
 * @module The system prompt of an agent turn (issue 10 "The agent loop"): it names the workspace and the
 * tools, says how paths and confirmations work, and appends the workspace's AGENTS.md when present.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkspaceTool } from './tools/tool.ts';

/** AGENTS.md beyond this many bytes is cut (the whole history goes to the model on every call). */
export const AGENTS_MD_MAX_BYTES = 32 * 1024;

export function buildSystemPrompt(
  workspace: string,
  tools: readonly WorkspaceTool[],
  worker: boolean,
): string {
  const lines = [
    `You are a coding agent working in the workspace directory ${workspace}.`,
    'Every path you give a tool is relative to that directory; paths outside it are refused.',
    // a worker is not offered delegate (loop.ts requestOf): name only what the model can call
    `Tools: ${tools
      .filter((t) => !worker || t.name !== 'delegate')
      .map((t) => t.name)
      .join(', ')}.`,
    'Tools that change files or run commands may need the user to confirm them; a denied call comes back as an error result.',
    worker
      ? 'You are a worker session doing one delegated task: finish it and answer with the result as text.'
      : 'Use delegate to hand a self-contained sub-task to a worker model when that helps.',
  ];
  const agents = readAgentsMd(workspace);
  if (agents) lines.push('', 'Instructions from the workspace AGENTS.md:', agents);
  return lines.join('\n');
}

// --- internal ---

function readAgentsMd(workspace: string): string | null {
  try {
    const buf = readFileSync(join(workspace, 'AGENTS.md'));
    const text = buf.subarray(0, AGENTS_MD_MAX_BYTES).toString('utf8');
    return buf.length > AGENTS_MD_MAX_BYTES
      ? `${text}\n[AGENTS.md was cut at ${AGENTS_MD_MAX_BYTES} bytes]`
      : text;
  } catch {
    return null;
  }
}
