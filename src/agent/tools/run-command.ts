/**
 * @module run_command: `sh -c <command>` in the workspace with ctx.childEnv (no provider keys), in its own
 * process group. On timeout (`timeout`) or on ctx.signal (`cancelled`) the whole group gets SIGKILL, and when the
 * shell exits any process it left in the group is killed too, so nothing a command starts outlives the call.
 * A non-zero exit is still ok:true with the exit code in the output: a failing test run or a grep without
 * matches is information for the model, not a tool failure. stdout+stderr are combined and capped at 64 KiB.
 * If the server dies first, a watchdog in the group kills it (GROUP_WATCHDOG).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as v from 'valibot';
import { CappedOutput } from './command-output.ts';
import { fail, fsFailure, isFailure, optionalField, parseInput, toolInput } from './result.ts';
import type { ToolContext, ToolResult, WorkspaceTool } from './tool.ts';
import { resolveWorkspacePath } from './workspace-path.ts';

export const COMMAND_CAP_BYTES = 64 * 1024;
export const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;
const MAX_COMMAND_TIMEOUT_MS = 30 * 60_000; // the default turn timeout
/** Linux's bound on one exec argument (MAX_ARG_STRLEN, 128 KiB with its NUL): the command is `sh -c`'s argument. */
export const MAX_COMMAND_BYTES = 128 * 1024 - 1;

const InputSchema = toolInput({
  command: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty')),
  timeout_ms: optionalField(
    v.pipe(
      v.number('must be a number'),
      v.integer('must be an integer'),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(MAX_COMMAND_TIMEOUT_MS, `must be at most ${MAX_COMMAND_TIMEOUT_MS}`),
    ),
  ),
});

export const runCommandTool: WorkspaceTool = {
  name: 'run_command',
  description:
    'Run a shell command (sh -c) in the workspace directory. Output (stdout and stderr combined, capped at ' +
    '64 KiB) and the exit code are returned; the command is killed after timeout_ms (default 120000).',
  input_schema: {
    type: 'object',
    properties: {
      command: { type: 'string', description: 'The shell command line.' },
      timeout_ms: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_COMMAND_TIMEOUT_MS,
        description: 'Kill the command after this many milliseconds (default 120000).',
      },
    },
    required: ['command'],
    additionalProperties: false,
  },
  needsConfirmation: true,
  readOnly: false,
  run: runCommand,
  check: async (input, ctx) => {
    const prepared = await prepare(input, ctx);
    return isFailure(prepared) ? prepared : null;
  },
};

/** The command and the workspace it runs in, or the failure met before anything is started. */
async function prepare(input: unknown, ctx: ToolContext) {
  const parsed = parseInput(InputSchema, input);
  if (!parsed.ok) return parsed;
  const { command } = parsed.value;
  if (command.includes('\0')) return fail('invalid_input', 'input field `command`: contains a NUL byte');
  const bytes = Buffer.byteLength(command);
  if (bytes > MAX_COMMAND_BYTES) {
    return fail(
      'invalid_input',
      `input field \`command\`: is ${bytes} bytes, over the system's 128 KiB bound on a command line; ` +
        'write the script to a file with write_file and run that file',
    );
  }
  const cwd = await resolveWorkspacePath(ctx.workspace, '.');
  if (isFailure(cwd)) return cwd;
  return { command, cwd, timeoutMs: parsed.value.timeout_ms ?? DEFAULT_COMMAND_TIMEOUT_MS };
}

async function runCommand(input: unknown, ctx: ToolContext): Promise<ToolResult> {
  if (ctx.signal.aborted) return fail('cancelled', 'run_command was cancelled before it started');
  const prepared = await prepare(input, ctx);
  if (isFailure(prepared)) return prepared;
  const { command, cwd, timeoutMs } = prepared;
  const run = await spawnGroup(command, cwd.root, ctx, timeoutMs);
  if (run.type === 'spawn_error') {
    if ((run.error as NodeJS.ErrnoException).code === 'E2BIG')
      return fail('execution_error', 'the command and the environment are over the system bound (E2BIG)');
    return fsFailure(run.error, 'sh');
  }
  const output = run.output.text();
  // the output goes to the model, never into the tool.failed event (tool.completed carries no output either)
  if (run.type === 'timeout') {
    const message = `command timed out after ${timeoutMs} ms; its process group was killed`;
    return { ...fail('timeout', message), output };
  }
  if (run.type !== 'exited')
    return { ...fail('cancelled', 'command cancelled; its process group was killed'), output };
  const status = run.code !== null ? `exit code: ${run.code}` : `killed by signal ${run.signal}`;
  const result: ToolResult = { ok: true, output: `${status}\n${output}` };
  return run.output.truncated ? { ...result, truncated: true } : result;
}

// --- internal ---

/**
 * The shell that runs a command: a watchdog in the group blocks on fd 3, which only this server holds open;
 * when the server dies without cancelling the command (kill -9, a crash) the read ends and the watchdog kills
 * the whole group, so a command of a turn the restart records as cancelled does not go on changing the
 * workspace. The command itself runs as `sh -c <command>` (pid = pgid) without fd 3; the watchdog is not
 * its child (a subshell that exits starts it), so a command that waits for all its children never waits for it.
 */
const GROUP_WATCHDOG =
  '( { read -r _ <&3; kill -KILL 0; } </dev/null >/dev/null 2>&1 & ); exec 3<&-; exec sh -c "$1"';

/** How long the output pipes may stay open after the shell exited (held by a process outside the group). */
const EXIT_DRAIN_MS = 250;

type Run =
  | { type: 'exited'; code: number | null; signal: NodeJS.Signals | null; output: CappedOutput }
  | { type: 'timeout' | 'cancelled'; output: CappedOutput }
  | { type: 'spawn_error'; error: Error };

function spawnGroup(command: string, cwd: string, ctx: ToolContext, timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    const output = new CappedOutput(COMMAND_CAP_BYTES);
    let child: ChildProcess;
    try {
      child = spawn('sh', ['-c', GROUP_WATCHDOG, 'sh', command], {
        cwd,
        env: ctx.childEnv,
        detached: true, // own process group (pgid = child.pid), so -pid reaches every descendant
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'], // fd 3: the watchdog's line to this process
      });
    } catch (error) {
      // spawn throws (rather than emitting 'error') for some refusals: E2BIG (arguments plus environment
      // over the system's bound), an argument Node will not pass
      resolve({ type: 'spawn_error', error: error as Error });
      return;
    }
    let ended: 'timeout' | 'cancelled' | null = null;
    const stop = (why: 'timeout' | 'cancelled') => {
      if (ended) return;
      ended = why;
      killGroup(child.pid);
      // Pipes may stay open in a process that left the group (setsid); answer without waiting for them.
      child.stdout?.destroy();
      child.stderr?.destroy();
    };
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    const onAbort = () => stop('cancelled');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    // an abort that came while the workspace path was being checked fired before this listener existed
    if (ctx.signal.aborted) stop('cancelled');
    const cleanup = () => {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
    };
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('error', (error) => {
      cleanup();
      resolve({ type: 'spawn_error', error });
    });
    // The shell is done: whatever it left running in its group (`server &`) is killed, which also closes
    // the pipes those leftovers hold, so 'close' follows at once instead of at the timeout. A process that
    // left the group (setsid, a daemon that kept its stdout) may still hold them: what it writes within
    // EXIT_DRAIN_MS is kept, then the pipes are let go and the command's own exit is the answer (not a
    // timeout of a command that finished).
    let drain: NodeJS.Timeout | undefined;
    child.on('exit', () => {
      killGroup(child.pid);
      drain = setTimeout(() => {
        for (const stream of child.stdio) stream?.destroy();
      }, EXIT_DRAIN_MS);
    });
    child.on('close', (code, signal) => {
      cleanup();
      clearTimeout(drain);
      resolve(ended ? { type: ended, output } : { type: 'exited', code, signal, output });
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already gone.
  }
}
