// The `ragline` command: commander wiring and the one place where errors
// become messages and exit codes.

import { Command, CommanderError } from 'commander';
import { UserError, EXIT_FAILURE } from '../util/errors.js';
import { registerAsk } from './commands/ask.js';
import { registerChat } from './commands/chat.js';
import { registerEval } from './commands/eval.js';
import { registerConfig } from './commands/config.js';
import { registerDoctor } from './commands/doctor.js';
import { registerIngest } from './commands/ingest.js';
import { registerPrune } from './commands/prune.js';
import { registerReplay } from './commands/replay.js';
import { registerSessions } from './commands/sessions.js';
import { registerSearch } from './commands/search.js';
import { registerStats } from './commands/stats.js';
import { createOutput } from './output.js';

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('ragline')
    .description('Chat with your own documents: hybrid retrieval, visible follow-up rewriting, and a replayable trail in one SQLite file.')
    .version('0.1.0')
    .option('--db <path>', 'database file (env RAGLINE_DB; default $XDG_DATA_HOME/ragline/ragline.db)')
    .option('--config <file>', 'config file (env RAGLINE_CONFIG; default $XDG_CONFIG_HOME/ragline/config.json)')
    .option('--provider <name>', 'auto, offline or openai (env RAGLINE_PROVIDER)')
    .option('--base-url <url>', 'OpenAI-compatible server, e.g. http://localhost:11434/v1 (env OPENAI_BASE_URL)')
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
  registerIngest(program);
  registerChat(program);
  registerAsk(program);
  registerSearch(program);
  registerEval(program);
  registerStats(program);
  registerPrune(program);
  registerReplay(program);
  registerSessions(program);
  registerConfig(program);
  registerDoctor(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  program.exitOverride();
  const output = createOutput();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    process.exitCode = reportError(err, output);
  }
}

function reportError(err: unknown, output: ReturnType<typeof createOutput>): number {
  if (err instanceof CommanderError) {
    // commander has printed its message already; help and version exit 0
    return err.exitCode === 0 ? 0 : 2;
  }
  if (process.env.RAGLINE_DEBUG) {
    output.err(err instanceof Error ? (err.stack ?? err.message) : String(err));
    if (err instanceof Error && err.cause) output.err(`cause: ${String((err.cause as Error).stack ?? err.cause)}`);
  }
  if (err instanceof UserError) {
    output.err(output.errColor.red('error: ') + err.message);
    if (err.hint) output.err(output.errColor.dim(err.hint));
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  output.err(output.errColor.red('error: ') + message);
  if (!process.env.RAGLINE_DEBUG) output.err(output.errColor.dim('Set RAGLINE_DEBUG=1 to see the stack trace.'));
  return EXIT_FAILURE;
}

await main(process.argv);
