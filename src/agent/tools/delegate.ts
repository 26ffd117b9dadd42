/**
 * @module delegate: the definition the model sees. Its execution (a worker session running one turn on the
 * requested model) belongs to the agent loop, which intercepts this tool by name; run() only answers if
 * something calls it directly.
 */
import * as v from 'valibot';
import { fail, optionalField, parseInput, toolInput } from './result.ts';
import type { ToolResult, WorkspaceTool } from './tool.ts';

/** The delegate input, validated by the loop before it starts a worker. */
export const DelegateInputSchema = toolInput({
  task: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty')),
  model: optionalField(v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'))),
});
export type DelegateInput = v.InferOutput<typeof DelegateInputSchema>;

export const delegateTool: WorkspaceTool = {
  name: 'delegate',
  description:
    'Hand a self-contained task to a worker agent on another model and get its final answer back. model is a ' +
    'model id, alias or tier (fast, balanced, deep); the worker may read the workspace but cannot delegate again.',
  input_schema: {
    type: 'object',
    properties: {
      task: { type: 'string', description: 'The complete task for the worker, with all context it needs.' },
      model: { type: 'string', description: 'Model id, alias or tier for the worker (optional).' },
    },
    required: ['task'],
    additionalProperties: false,
  },
  needsConfirmation: false,
  readOnly: true,
  run: runDelegate,
};

async function runDelegate(input: unknown): Promise<ToolResult> {
  const parsed = parseInput(DelegateInputSchema, input);
  if (!parsed.ok) return parsed;
  return fail('execution_error', 'delegate is handled by the agent loop, not run as a workspace tool');
}
