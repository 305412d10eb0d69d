// `ragline ask "<question>"`: one turn without the REPL, same output as chat.

import type { Command } from 'commander';
import { ASKS_SESSION, Chat } from '../../app/chat.js';
import { checkAskable } from '../../app/limits.js';
import { UserError } from '../../util/errors.js';
import { runTurnWithOutput, warnWhenNothingIngested } from '../chat-session.js';
import { openWorkspaceFor, settingsFor } from '../context.js';
import { ioOf, onStop, setExitCode, stopExitCode, type StopSignal } from '../io.js';
import { outputFor } from '../output.js';
import { DEFAULTS } from '../../config/index.js';

export function registerAsk(program: Command): void {
  program
    .command('ask')
    .description('ask one question (a follow-up too, with --session) and print the answer')
    .argument('[question...]', 'the question (read from stdin when not given)')
    .option('--session <id|name>', 'ask within this session, as a follow-up (`last` for the most recent); default: the session "asks", searched as asked')
    .option('-k, --k <n>', `chunks to retrieve (default ${DEFAULTS['retrieval.k']})`)
    .option('--rewrite <mode>', 'follow-up rewriting: auto, always or never')
    .option('--scope <text>', 'what the assistant is for')
    .option('-q, --quiet', 'print only the answer and its citations')
    .option('--json', 'print NDJSON events')
    .addHelpText(
      'after',
      '\nExamples:\n  ragline ask "How do I create an API key?"\n  ragline ask --session last "does it expire?"\n  echo "How do I create an API key?" | ragline ask -q',
    )
    .action(async (words: string[], flags: { session?: string; k?: string; rewrite?: string; scope?: string; quiet?: boolean; json?: boolean }, command: Command) => {
      if (flags.quiet && flags.json) {
        throw new UserError('-q/--quiet and --json cannot be used together.', { hint: 'Use --json for every event of the turn (the answer is in the `done` event), or -q for the answer alone.', exitCode: 2 });
      }
      const io = ioOf(command);
      const question = words.length > 0 ? words.join(' ').trim() : await questionFromStdin(io.stdin);
      // Empty or too long: refused before the workspace is opened.
      checkAskable(question, 'question', 'Give it as an argument, `ragline ask "How do I ...?"`, or on stdin: `echo "How do I ...?" | ragline ask`.');
      const settings = settingsFor(command, { 'retrieval.k': flags.k, 'rewrite.policy': flags.rewrite, 'assistant.scope': flags.scope });
      const output = outputFor(command);
      const workspace = openWorkspaceFor(settings);
      const controller = new AbortController();
      let stoppedBy: StopSignal | undefined;
      const stopListening = onStop(io.signals, (signal) => {
        stoppedBy ??= signal;
        controller.abort();
      });
      try {
        if (!flags.quiet) await warnWhenNothingIngested(workspace, output);
        // Without --session, the question goes to the one session of one-off asks,
        // searched as asked: it follows up on none of them (`--session last` does).
        // That session is only planned until its first question is stored, so an ask
        // that fails before its turn starts leaves no empty session behind.
        const oneOff = !flags.session;
        const chat = await Chat.open(workspace, oneOff ? { rolling: ASKS_SESSION } : { session: flags.session });
        await chat.prepare();
        const result = await runTurnWithOutput(chat, question, output, {
          rewritePolicy: oneOff && !chat.planned && flags.rewrite === undefined ? 'never' : undefined,
          json: Boolean(flags.json),
          quiet: Boolean(flags.quiet),
          signal: controller.signal,
        });
        if (!flags.json && !flags.quiet && !chat.planned) output.err(output.errColor.dim(`session ${chat.session.name ?? chat.session.id}`));
        if (result.status === 'failed') setExitCode(command, 1);
        if (result.status === 'interrupted') setExitCode(command, stopExitCode(stoppedBy));
      } finally {
        stopListening();
        await workspace.close();
      }
    });
}

/** The whole of stdin as the question, when it is not a terminal (a terminal gives none: the usage error says how). */
async function questionFromStdin(stdin: NodeJS.ReadStream): Promise<string> {
  if (stdin.isTTY) return '';
  let text = '';
  stdin.setEncoding('utf8');
  for await (const chunk of stdin) text += chunk as string;
  return text.trim();
}
