// `ragline prune --older-than 30d` (the `history.retention` setting does the same when chat starts).

import type { Command } from 'commander';
import { prune } from '../../app/prune.js';
import { DURATION_HELP, parseHistoryAge } from '../../config/index.js';
import { openWorkspaceFor, settingsFor } from '../context.js';
import { outputFor } from '../output.js';
import { describePrune } from '../render.js';

export function registerPrune(program: Command): void {
  program
    .command('prune')
    .description('delete conversation turns older than a given age (documents are never touched)')
    .requiredOption('--older-than <age>', `an age in ${DURATION_HELP}`)
    .option('--dry-run', 'only report what would be removed')
    .option('--json', 'print the report as JSON')
    .addHelpText(
      'after',
      `\nExamples:\n  ragline prune --older-than 30d --dry-run\n  ragline prune --older-than 6mo\n\nAges: ${DURATION_HELP}; above zero (0d would remove all chat history).\nSet history.retention in the config file to prune automatically when chat starts.`,
    )
    .action(async (flags: { olderThan: string; dryRun?: boolean; json?: boolean }, command: Command) => {
      // A zero age is refused, as history.retention refuses it, with or without --dry-run:
      // a dry run shows what the same command would remove.
      const ms = parseHistoryAge(flags.olderThan, '--older-than', {
        would: 'remove all chat history',
        hint: 'Give an age above zero, e.g. --older-than 30d for the turns older than 30 days (--dry-run first shows what would go); `ragline sessions rm <session>` removes one conversation.',
      });
      const output = outputFor(command);
      const workspace = openWorkspaceFor(settingsFor(command));
      try {
        const report = await prune(workspace, ms, { dryRun: flags.dryRun });
        if (flags.json) output.json(report);
        else output.out(describePrune(report));
      } finally {
        await workspace.close();
      }
    });
}
