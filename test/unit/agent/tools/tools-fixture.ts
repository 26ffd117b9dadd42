import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { childEnvFrom } from '#src/agent/tools/child-env.ts';
import type { ToolContext, ToolResult } from '#src/agent/tools/tool.ts';

/** A fresh workspace directory (and a sibling "outside" directory), removed after the test. */
export async function workspace(
  t: TestContext,
  files: Record<string, string> = {},
): Promise<{ dir: string; outside: string; ctx: ToolContext }> {
  const base = await mkdtemp(path.join(tmpdir(), 'svc-tools-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  const dir = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  await mkdir(dir);
  await mkdir(outside);
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), content);
  }
  const ctx: ToolContext = {
    workspace: dir,
    signal: new AbortController().signal,
    childEnv: childEnvFrom(process.env),
  };
  return { dir, outside, ctx };
}

export function okOutput(result: ToolResult): string {
  if (!result.ok) throw new Error(`expected ok, got ${result.error_class}: ${result.message}`);
  return result.output;
}

export function failure(result: ToolResult): Extract<ToolResult, { ok: false }> {
  if (result.ok) throw new Error(`expected a failure, got ok: ${result.output.slice(0, 200)}`);
  return result;
}
