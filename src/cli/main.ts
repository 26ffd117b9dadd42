/**
 * @module The `svc` entry point: resolves the subcommand chain, answers --help/--version itself, checks
 * flags strictly, runs the leaf command, and maps failures to exit codes (0 ok, 1 failure, 2 usage).
 */
// first: svc serve's secrets leave its exec-time environment before anything else loads
import './secret-handoff.ts';
import { type ArgsDef, type CommandDef, renderUsage, runCommand } from 'citty';
import { debugRequested, readEnv } from '../config/env.ts';
import { errorMessage, isSvcError, SvcError } from '../lib/errors.ts';
import { holdHangups, releaseHangups } from '../lib/hangup.ts';
import { holdStopSignals, releaseStopSignals } from '../lib/stop-signal.ts';
import { describeUnreachableStore } from '../store/dialect.ts';
import { describePostgresRefusal } from '../store/postgres-refusals.ts';
import { describeSqliteFailure } from '../store/sqlite-errors.ts';
import { terminalLine } from './chat/terminal-text.ts';
import { rootCommand, VERSION } from './root.ts';

async function main(rawArgs: string[]): Promise<void> {
  // a write to stdout/stderr that fails (a reader gone, a full disk) is an 'error' event, which with no
  // listener ends any command, a running server included, with Node's stack trace
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    stdoutError ??= err;
  });
  process.stderr.on('error', () => {}); // nowhere left to say it
  // loading a server's code takes a few hundred ms, and a SIGTERM then killed it (exit 143, no log line):
  // hold stop signals until the command is known; a server takes the held one over and stops cleanly
  holdStopSignals();
  // and SIGHUP, a server's routing.yaml reload, which ended it (exit 129) outside its reload listener
  holdHangups();
  try {
    if (rawArgs.length === 1 && (rawArgs[0] === '--version' || rawArgs[0] === '-v')) {
      process.stdout.write(`${VERSION}\n`);
      return;
    }
    // `svc help [command…]` and `svc gateway help issue-key` are `svc [command…] --help` (resolveChain)
    let { chain, rest, helpWord } = await resolveChain(rootCommand as CommandDef, rawArgs);
    // `svc` alone is a missing command like `svc analytics` alone: one sentence and exit 2, not the help
    const help = helpWord || (await asksForHelp(chain[chain.length - 1], rest));
    // `svc --help gateway` is the gateway's help: the words after the help flag name the command
    if (help) ({ chain, rest } = await resolveChain(chain, withoutHelpFlags(rest)));
    const leaf = chain[chain.length - 1];
    // any other command keeps Node's default action: a held signal ends it now, as it would have then
    if (help || !SERVER_COMMANDS.has(commandName(chain))) await releaseStopSignals({ reraise: true });
    if (help || !RELOADING_COMMANDS.has(commandName(chain))) await releaseHangups({ reraise: true });
    if (help) {
      process.stdout.write(`${plain(await renderUsage(leaf, withFullName(chain)))}\n`);
      return;
    }
    await checkArgs(leaf, rest, chain);
    if (!leaf.run) {
      const name = commandName(chain);
      const given = rest.find((a) => !a.startsWith('-'));
      const subs = Object.keys((leaf.subCommands ? await resolveValue(leaf.subCommands) : undefined) ?? {});
      throw new SvcError('usage_error', {
        message: given
          ? `Unknown command "${given}" for ${name}; run \`${name} --help\` to see the commands.`
          : `${name} needs a command (${subs.join(', ')}); run \`${name} --help\` to see what each does.`,
      });
    }
    readEnv(); // refuses an SVC_DEBUG that is no switch value at every command, before it runs
    await runCommand(leaf, { rawArgs: rest });
  } catch (err) {
    process.exitCode = report(err);
  } finally {
    await releaseStopSignals({ reraise: false }); // a server's refusal keeps its own exit code
    await releaseHangups({ reraise: false });
    await reportStdoutError();
  }
}

// --- internal ---

/** Commands that stop gracefully on SIGTERM/SIGINT, from the first moment (lib/stop-signal.ts). */
const SERVER_COMMANDS: ReadonlySet<string> = new Set(['svc gateway', 'svc serve', 'svc forward']);

/** Commands whose SIGHUP re-reads routing.yaml: held from the first moment to the end (lib/hangup.ts). */
const RELOADING_COMMANDS: ReadonlySet<string> = new Set(['svc gateway', 'svc serve']);

/** Flags whose every value counts (`issue-key --allow-model a --allow-model b`); any other is given once. */
const REPEATABLE_FLAGS: ReadonlySet<string> = new Set(['allow-model']);

let stdoutError: NodeJS.ErrnoException | undefined;

/**
 * A reader that went away first (EPIPE: `svc … | head`) chose to stop reading: nothing to say. Any other
 * failure lost the answer: one sentence and exit 1 (unless the command already failed). The command itself
 * ran to its end, so the sentence never asks to simply run it again (a second `svc backup` to the same file
 * is refused, a second forget has nothing left to do); the key commands say more of their own.
 */
async function reportStdoutError(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve)); // a failed write reports its error a tick later
  if (stdoutError === undefined || stdoutError.code === 'EPIPE') return;
  if (process.exitCode !== undefined && process.exitCode !== 0) return;
  process.stderr.write(
    `svc: Cannot write to standard output (${stdoutError.code ?? errorMessage(stdoutError)}); the command ran to its end and only what it printed is lost, so check where the output goes (a full disk?) before you run it again: what it wrote (a backup, a restore, a forget) is done.\n`,
  );
  process.exitCode = 1;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI colour escapes is the point
const ANSI_RE = /\u001b\[[0-9;]*m/g;

async function resolveValue<T>(v: T | (() => T | Promise<T>) | Promise<T>): Promise<T> {
  return typeof v === 'function' ? (v as () => T | Promise<T>)() : v;
}

/**
 * Walks subcommands by the leading positional words; unknown words are reported by the caller. The word
 * `help` where a command word goes asks for the help of the command the other words name (`svc help
 * gateway`, `svc gateway help issue-key`); where the command takes an argument it stays that argument.
 */
async function resolveChain(
  from: CommandDef | CommandDef[],
  rawArgs: string[],
): Promise<{ chain: CommandDef[]; rest: string[]; helpWord: boolean }> {
  const chain: CommandDef[] = Array.isArray(from) ? [...from] : [from];
  let rest = rawArgs;
  let helpWord = false;
  for (;;) {
    const cmd = chain[chain.length - 1];
    const subs = cmd.subCommands ? await resolveValue(cmd.subCommands) : undefined;
    const first = rest[0];
    if (!subs || first === undefined || first.startsWith('-')) break;
    const next = subs[first];
    if (!next) {
      // a positional of the command itself (`svc gateway` takes none: `svc gateway frob` is no command of it)
      if (cmd.run && (await takesPositionals(cmd))) break;
      if (first === 'help') {
        helpWord = true;
        rest = rest.slice(1);
        continue;
      }
      const name = commandName(chain);
      throw new SvcError('usage_error', {
        message: `Unknown command "${first}" for ${name}; run \`${name} --help\` to see the commands.`,
      });
    }
    chain.push(await resolveValue(next as CommandDef));
    rest = rest.slice(1);
  }
  return { chain, rest, helpWord };
}

/**
 * `--help` or `-h` where a flag goes, not as a flag's value: `issue-key --name -h --workspace .` issues a key
 * labelled -h (exit 0 with the help instead would read as done), and after `--` every word is an argument.
 */
async function asksForHelp(cmd: CommandDef, rest: string[]): Promise<boolean> {
  const defs = (cmd.args ? await resolveValue(cmd.args) : {}) as ArgsDef;
  const takesValue = new Set<string>();
  for (const [key, def] of Object.entries(defs)) {
    if (def.type !== 'positional' && def.type !== 'boolean') takesValue.add(key).add(kebab(key));
  }
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
    if (arg.startsWith('-') && !arg.includes('=') && takesValue.has(arg.replace(/^--?/, ''))) {
      const value = rest[i + 1];
      if (value !== '--help') i++; // `--name --help` asks for help: a value never starts with "--" (checkArgs)
    }
  }
  return false;
}

/** The words before `--` without the help flags, so the command words after one are walked too. */
function withoutHelpFlags(rest: string[]): string[] {
  const end = rest.indexOf('--');
  const head = end < 0 ? rest : rest.slice(0, end);
  return head.filter((a) => a !== '--help' && a !== '-h');
}

async function takesPositionals(cmd: CommandDef): Promise<boolean> {
  const defs = (cmd.args ? await resolveValue(cmd.args) : {}) as ArgsDef;
  return Object.values(defs).some((def) => def.type === 'positional');
}

/** Rejects unknown flags, missing values and surplus positionals with a usage error (exit 2). */
async function checkArgs(cmd: CommandDef, rest: string[], chain: CommandDef[]): Promise<void> {
  const defs = (cmd.args ? await resolveValue(cmd.args) : {}) as ArgsDef;
  const name = commandName(chain);
  const flags = new Map<string, string>();
  let positionals = 0;
  for (const [key, def] of Object.entries(defs)) {
    if (def.type === 'positional') positionals++;
    else {
      flags.set(key, def.type ?? 'string');
      flags.set(kebab(key), def.type ?? 'string');
      for (const a of [(def as { alias?: string | string[] }).alias ?? []].flat())
        flags.set(a, def.type ?? 'string');
    }
  }
  let seenPositionals = 0;
  let afterDashes = false;
  const given = new Map<string, number>();
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    // after `--` every word is a positional (an id that starts with "-"): citty ignores the surplus ones,
    // so `forget -- -x --confirm --db-path b.db` would run without the flags it was given
    if (arg === '--' && !afterDashes) {
      afterDashes = true;
      continue;
    }
    if (afterDashes || !arg.startsWith('-') || arg === '-') {
      seenPositionals++;
      if (seenPositionals > positionals) {
        throw new SvcError('usage_error', {
          message: `Unexpected argument "${arg}" for ${name}; run \`${name} --help\` for its usage.`,
        });
      }
      continue;
    }
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const flag = eq >= 0 ? body.slice(0, eq) : body;
    // citty reads `-db-path x` as the letters -d -b -p … and x as an argument: the flag would go unread
    if (!arg.startsWith('--') && flags.has(flag)) {
      throw new SvcError('usage_error', {
        message: `Option "${arg}" of ${name} takes two dashes: write --${body}.`,
      });
    }
    // citty negates any flag as --no-<flag>, a string one too (its value then false): only a switch has a no
    const negates = flag.startsWith('no-') && flags.get(flag.slice(3)) === 'boolean';
    const type = flags.get(flag) ?? (negates ? 'boolean' : undefined);
    // citty keeps the last of a flag given twice, so `restore b --db-path a.db --db-path c.db` would
    // silently act on one of them: every flag is given once, but the ones that collect their values
    const canonical = kebab(flags.has(flag) ? flag : flag.slice(3));
    const times = (given.get(canonical) ?? 0) + 1;
    given.set(canonical, times);
    if (type && times > 1 && !REPEATABLE_FLAGS.has(canonical)) {
      throw new SvcError('usage_error', { message: `--${canonical} is given ${times} times; give it once.` });
    }
    if (!type) {
      // an id such as "-_-x" is a valid user id: say how to pass it as one
      const asValue =
        positionals > 0 && !arg.startsWith('--')
          ? `, or put a value that starts with "-" after "--" (\`${name} -- ${arg}\`)`
          : '';
      throw new SvcError('usage_error', {
        message: `Unknown option "${arg}" for ${name}; run \`${name} --help\` for its options${asValue}.`,
      });
    }
    // citty reads any value but "false" as true, so `--confirm=no` would confirm a forget and
    // `--force=0` replace a store: a switch takes no value, or exactly true / false
    if (type === 'boolean' && eq >= 0) {
      const value = body.slice(eq + 1);
      const negated = !flags.has(flag);
      if (negated || (value !== 'true' && value !== 'false')) {
        const plainFlag = negated ? flag.slice(3) : flag;
        throw new SvcError('usage_error', {
          message: `Option --${plainFlag} of ${name} is a switch: give it alone (or --${plainFlag}=true / --${plainFlag}=false), not "${arg}".`,
        });
      }
    }
    if (type !== 'boolean' && eq < 0) {
      const value = rest[i + 1];
      if (value === undefined || (value.startsWith('--') && value.length > 2)) {
        throw new SvcError('usage_error', { message: `Option --${flag} of ${name} needs a value.` });
      }
      i++;
    }
  }
}

function commandName(chain: CommandDef[]): string {
  return chain.map((c) => (c.meta as { name?: string } | undefined)?.name ?? '').join(' ');
}

function withFullName(chain: CommandDef[]): CommandDef | undefined {
  if (chain.length < 2) return undefined;
  return { meta: { name: commandName(chain.slice(0, -1)) } };
}

/** Drops ANSI colours unless stdout is a terminal. */
function plain(text: string): string {
  return process.stdout.isTTY ? text : text.replace(ANSI_RE, '');
}

function kebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

function report(err: unknown): number {
  const debug = debugRequested();
  if (isSvcError(err)) {
    process.stderr.write(`svc: ${terminalLine(err.message)}\n`);
    // the error's own stack says where svc refused; its cause's, what failed under it
    if (debug) process.stderr.write(`${err.stack}\n`);
    if (debug && err.cause) process.stderr.write(`${String((err.cause as Error)?.stack ?? err.cause)}\n`);
    return err.exitCode;
  }
  if (err instanceof Error && err.name === 'CLIError') {
    process.stderr.write(`svc: ${terminalLine(err.message.replace(ANSI_RE, ''))}; see --help.\n`);
    return 2;
  }
  const sqlite = describeSqliteFailure(err) ?? describePostgresRefusal(err) ?? describeUnreachableStore(err);
  if (sqlite !== undefined) {
    process.stderr.write(`svc: ${terminalLine(sqlite)}\n`);
    if (debug && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    return 1;
  }
  process.stderr.write(
    `svc: unexpected error: ${terminalLine(errorMessage(err))} (set SVC_DEBUG=1 for details).\n`,
  );
  if (debug && err instanceof Error) process.stderr.write(`${err.stack}\n`);
  return 1;
}

await main(process.argv.slice(2));
