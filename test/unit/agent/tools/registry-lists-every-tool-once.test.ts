import assert from 'node:assert/strict';
import { test } from 'node:test';
import { childEnvFrom } from '#src/agent/tools/child-env.ts';
import { delegateTool } from '#src/agent/tools/delegate.ts';
import { findTool, WORKSPACE_TOOLS } from '#src/agent/tools/registry.ts';
import { fsFailure } from '#src/agent/tools/result.ts';
import { TOOL_NAMES } from '#src/agent/tools/tool.ts';
import { failure, workspace } from './tools-fixture.ts';

test('the registry holds every tool of TOOL_NAMES once, in that order, and finds them by name', () => {
  assert.deepEqual(
    WORKSPACE_TOOLS.map((t) => t.name),
    [...TOOL_NAMES],
  );
  for (const tool of WORKSPACE_TOOLS) assert.equal(findTool(tool.name), tool);
  assert.equal(findTool('rm_rf'), undefined);
  assert.equal(findTool('toString'), undefined);
});

test('confirmation and read-only flags follow issue 10: only write_file, edit_file, run_command ask', () => {
  const asks = WORKSPACE_TOOLS.filter((t) => t.needsConfirmation).map((t) => t.name);
  assert.deepEqual(asks, ['write_file', 'edit_file', 'run_command']);
  const readOnly = WORKSPACE_TOOLS.filter((t) => t.readOnly).map((t) => t.name);
  assert.deepEqual(readOnly, ['read_file', 'list_files', 'search_files', 'delegate']);
});

/** An input each tool accepts (the run itself may still fail on the empty workspace). */
const validInputs: Record<string, Record<string, unknown>> = {
  read_file: { path: 'a' },
  list_files: {},
  search_files: { pattern: 'a' },
  write_file: { path: 'a', content: '' },
  edit_file: { path: 'a', old_string: 'a', new_string: 'b' },
  run_command: { command: 'true' },
  delegate: { task: 'a' },
};

test('every input schema is a closed JSON object schema whose required fields are rejected when missing', async (t) => {
  const { ctx } = await workspace(t);
  for (const tool of WORKSPACE_TOOLS) {
    assert.equal(tool.input_schema.type, 'object', tool.name);
    assert.equal(tool.input_schema.additionalProperties, false, tool.name);
    assert.ok(tool.description.length > 20, tool.name);
    const required = (tool.input_schema.required as string[] | undefined) ?? [];
    if (required.length > 0) {
      const res = failure(await tool.run({}, ctx));
      assert.equal(res.error_class, 'invalid_input', tool.name);
      assert.match(res.message, new RegExp(`\`(${required.join('|')})\``), tool.name);
    }
    assert.equal(failure(await tool.run('not an object', ctx)).error_class, 'invalid_input', tool.name);
    // closed, as additionalProperties false says: an unknown (misspelt) field is named, not ignored
    const extra = failure(await tool.run({ ...validInputs[tool.name], pathh: 'x' }, ctx));
    assert.equal(extra.error_class, 'invalid_input', tool.name);
    assert.match(extra.message, /`pathh`: is not a field/, tool.name);
  }
});

test('delegate is a definition only: task required, model optional; run() says the loop handles it', async (t) => {
  const { ctx } = await workspace(t);
  assert.deepEqual(delegateTool.input_schema.required, ['task']);
  assert.match(failure(await delegateTool.run({ model: 'fast' }, ctx)).message, /`task`/);
  const res = failure(await delegateTool.run({ task: 'summarise README', model: 'fast' }, ctx));
  assert.equal(res.error_class, 'execution_error');
  assert.match(res.message, /agent loop/);
});

test('childEnvFrom drops provider variables, any *_API_KEY, SVC_* settings and PGPASSWORD, and keeps the rest', () => {
  const env = childEnvFrom({
    ANTHROPIC_API_KEY: 'a',
    ANTHROPIC_BASE_URL: 'b',
    OPENAI_API_KEY: 'c',
    OPENAI_ORG_ID: 'd',
    OPENROUTER_API_KEY: 'e',
    GEMINI_API_KEY: 'f',
    SVC_DB_PATH: 'g',
    PGPASSWORD: 'the store password',
    PGHOST: 'db',
    PATH: '/usr/bin',
    HOME: '/home/u',
    API_KEYRING: 'kept',
  });
  assert.deepEqual(env, { PGHOST: 'db', PATH: '/usr/bin', HOME: '/home/u', API_KEYRING: 'kept' });
});

test('fs errors map onto DECISIONS §3 tool classes', () => {
  const err = (code: string) => Object.assign(new Error(code), { code });
  assert.equal(fsFailure(err('ENOENT'), 'a').error_class, 'not_found');
  assert.equal(fsFailure(err('EACCES'), 'a').error_class, 'permission_denied');
  assert.equal(fsFailure(err('EPERM'), 'a').error_class, 'permission_denied');
  assert.equal(fsFailure(err('EISDIR'), 'a').error_class, 'invalid_input');
  assert.equal(fsFailure(err('ELOOP'), 'a').error_class, 'outside_workspace');
  assert.equal(fsFailure(err('ENOSPC'), 'a').error_class, 'execution_error');
});
