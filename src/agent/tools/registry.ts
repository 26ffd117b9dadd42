/**
 * @module The workspace tools in TOOL_NAMES order (the order the model sees them) and a lookup by name.
 */
import { delegateTool } from './delegate.ts';
import { editFileTool } from './edit-file.ts';
import { listFilesTool } from './list-files.ts';
import { readFileTool } from './read-file.ts';
import { runCommandTool } from './run-command.ts';
import { searchFilesTool } from './search-files.ts';
import { TOOL_NAMES, type ToolName, type WorkspaceTool } from './tool.ts';
import { writeFileTool } from './write-file.ts';

const BY_NAME: Readonly<Record<ToolName, WorkspaceTool>> = {
  read_file: readFileTool,
  list_files: listFilesTool,
  search_files: searchFilesTool,
  write_file: writeFileTool,
  edit_file: editFileTool,
  run_command: runCommandTool,
  delegate: delegateTool,
};

/** Every tool, in TOOL_NAMES order. */
export const WORKSPACE_TOOLS: readonly WorkspaceTool[] = TOOL_NAMES.map((name) => BY_NAME[name]);

/** The tool a model's tool_use names, or undefined for a name outside the set. */
export function findTool(name: string): WorkspaceTool | undefined {
  return Object.hasOwn(BY_NAME, name) ? BY_NAME[name as ToolName] : undefined;
}
