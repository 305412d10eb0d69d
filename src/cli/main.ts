// The `ragline` command: commander wiring and the one place where errors
// become messages and exit codes.

import { createRequire } from 'node:module';
import type * as Commander from 'commander';
import { attachIo, exitCodeOf, processIo, type CliIo } from './io.js';
import { createOutput, guardBrokenPipe, loadColors } from './output.js';
import { reportError } from './report-error.js';
import { editDistance } from '../util/edit-distance.js';

// commander is CommonJS: required as such, it is not first scanned for named
// exports as an ES import of it would be (a few ms of every start).
const { Command, CommanderError } = createRequire(import.meta.url)('commander') as typeof Commander;
type Command = Commander.Command;

type Register = (program: Command) => void;

/**
 * Each command's module, loaded only when that command runs (or for help), so
 * start-up does not pay for the imports of the other eleven.
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  ingest: async () => (await import('./commands/ingest.js')).registerIngest,
  chat: async () => (await import('./commands/chat.js')).registerChat,
  ask: async () => (await import('./commands/ask.js')).registerAsk,
  search: async () => (await import('./commands/search.js')).registerSearch,
  eval: async () => (await import('./commands/eval.js')).registerEval,
  stats: async () => (await import('./commands/stats.js')).registerStats,
  documents: async () => (await import('./commands/documents.js')).registerDocuments,
  forget: async () => (await import('./commands/forget.js')).registerForget,
  prune: async () => (await import('./commands/prune.js')).registerPrune,
  replay: async () => (await import('./commands/replay.js')).registerReplay,
  sessions: async () => (await import('./commands/sessions.js')).registerSessions,
  config: async () => (await import('./commands/config.js')).registerConfig,
  doctor: async () => (await import('./commands/doctor.js')).registerDoctor,
  mcp: async () => (await import('./commands/mcp.js')).registerMcp,
  migrate: async () => (await import('./commands/migrate.js')).registerMigrate,
};

/** Other names a command answers to. */
const ALIASES: Record<string, string> = { docs: 'documents' };

/** Global options that take a value, to find the command name in argv. */
const VALUE_OPTIONS = new Set(['--db', '--config', '--provider', '--base-url', '--chat-model', '--rewrite-model', '--embed-model']);

/** The command named in `args` (process.argv without node and script), if any. */
export function commandIn(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return undefined;
    if (VALUE_OPTIONS.has(arg)) {
      i++;
      continue;
    }
    if (arg.startsWith('-')) continue;
    return arg;
  }
  return undefined;
}

/**
 * The program with the named command registered, none (`--version`), or all of
 * them (help, unknown command), writing to `io`.
 */
export async function buildProgram(command?: string | null, io: CliIo = processIo()): Promise<Command> {
  const program = new Command();
  attachIo(program, io);
  // Before the commands are added: they inherit it.
  if (io.stdout !== process.stdout || io.stderr !== process.stderr) {
    program.configureOutput({ writeOut: (text) => void io.stdout.write(text), writeErr: (text) => void io.stderr.write(text) });
  }
  program
    .name('ragline')
    .description('Chat with your own documents: hybrid retrieval, visible follow-up rewriting, and a replayable trail in one SQLite file.')
    .version('0.1.0')
    .option('--db <path>', 'database file (env RAGLINE_DB; default $XDG_DATA_HOME/ragline/ragline.db)')
    .option('--config <file>', 'config file (env RAGLINE_CONFIG; default $XDG_CONFIG_HOME/ragline/config.json)')
    .option('--provider <name>', 'auto, offline or openai (env RAGLINE_PROVIDER)')
    .option('--base-url <url>', 'OpenAI-compatible server, e.g. http://localhost:11434/v1 (env RAGLINE_BASE_URL or OPENAI_BASE_URL)')
    .option('--chat-model <name>', 'model for answers (env RAGLINE_CHAT_MODEL)')
    .option('--rewrite-model <name>', 'model for follow-up rewrites (env RAGLINE_REWRITE_MODEL; default: the chat model)')
    .option('--embed-model <name>', 'embedding model (env RAGLINE_EMBED_MODEL)')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Without OPENAI_API_KEY or a base URL, everything runs offline: a built-in
embedder, rewriter and extractive answerer, no network and no key.

Quick start:
  ragline ingest ./docs
  ragline chat`,
    );
  const named = command ? COMMANDS[ALIASES[command] ?? command] : undefined;
  const loaders = command === null ? [] : named ? [named] : Object.values(COMMANDS);
  for (const register of await Promise.all(loaders.map((load) => load()))) register(program);
  throwInsteadOfExit(program);
  return program;
}

/** The errors commander raised in a command under the program rather than in the program itself. */

/**
 * commander ends the process itself (process.exit) for help, a version or a
 * usage error unless a command is told to throw instead, and a subcommand does
 * not inherit that from a program told after it was added. Every command throws,
 * so a run in-process never ends its host; run() returns the code the process
 * exits with: 0 for help and the version, 2 for every usage error.
 */
function throwInsteadOfExit(command: Command): void {
  command.exitOverride((err) => {
    throw err;
  });
  for (const sub of command.commands) throwInsteadOfExit(sub);
}

/** Commands whose argument is free text, which can start with "-" ("--leak-check=full"). */
const TEXT_COMMANDS: Record<string, string> = { search: 'search for', ask: 'ask about' };

/**
 * For `ragline search "--leak-check=full"`: commander reads the text as an unknown
 * option; say how to give it as text. Not for a near miss of one of the command's
 * options (`--jsn`), which commander answers with "Did you mean --json?".
 */
function textAsOptionHint(err: InstanceType<typeof CommanderError>, program: Command, args: readonly string[], command: string | undefined): string | undefined {
  const verb = command === undefined ? undefined : TEXT_COMMANDS[command];
  if (err.code !== 'commander.unknownOption' || verb === undefined) return undefined;
  const sub = program.commands.find((c) => c.name() === command);
  const known = [...program.options, ...(sub?.options ?? [])].flatMap((option) => [option.long, option.short]).filter((flag): flag is string => flag !== undefined);
  const typed = args.slice(args.indexOf(command!) + 1).find((arg) => arg.startsWith('-') && arg !== '--' && !known.includes(arg.split('=')[0]!));
  if (typed === undefined || known.some((flag) => flag.startsWith('--') && editDistance(flag, typed.split('=')[0]!) <= 2)) return undefined;
  return `To ${verb} text that starts with "-", put -- before it: ragline ${command} -- "${typed}"`;
}

/**
 * Runs `ragline <args>` (the arguments after the program name) with `io` (default:
 * this process's streams, environment, working directory and signals) and
 * returns its exit code. The process's exitCode is not touched; the `ragline`
 * command sets it from the result (bin/ragline.js).
 */
export async function run(args: string[], io: Partial<CliIo> = {}): Promise<number> {
  const streams: CliIo = { ...processIo(), ...io };
  const command = commandIn(args);
  await loadColors(streams);
  // `ragline --version` needs no command module.
  const program = await buildProgram(command === undefined && args.some((a) => a === '-V' || a === '--version') ? null : command, streams);
  const output = createOutput(streams.stdout, streams.stderr, streams.env);
  let code: number | undefined;
  guardBrokenPipe(streams, () => code ?? exitCodeOf(program));
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (err) {
    // commander has printed its message already; help and version exit 0
    if (err instanceof CommanderError) {
      code = err.exitCode === 0 ? 0 : 2;
      const hint = textAsOptionHint(err, program, args, command);
      if (hint) output.err(hint);
    }
    else code = reportError(err, output, streams.env);
  }
  return code ?? exitCodeOf(program) ?? 0;
}
