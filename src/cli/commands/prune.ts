// `ragline prune --older-than 30d`, and the `history.retention` setting applied when chat starts.

import type { Command } from 'commander';
import { DURATION_HELP, parseDuration, type Config } from '../../config/index.js';
import type { Db } from '../../store/db.js';
import { pruneTurns, type PruneReport } from '../../store/retention.js';
import { openDb, settingsFor } from '../context.js';
import { createOutput, type Output } from '../output.js';

export function registerPrune(program: Command): void {
  program
    .command('prune')
    .description('delete conversation turns older than a given age (documents are never touched)')
    .requiredOption('--older-than <age>', `an age in ${DURATION_HELP}`)
    .option('--dry-run', 'only report what would be removed')
    .option('--json', 'print the report as JSON')
    .addHelpText(
      'after',
      `\nExamples:\n  ragline prune --older-than 30d --dry-run\n  ragline prune --older-than 6mo\n\nAges: ${DURATION_HELP}.\nSet history.retention in the config file to prune automatically when chat starts.`,
    )
    .action((flags: { olderThan: string; dryRun?: boolean; json?: boolean }, command: Command) => {
      const ms = parseDuration(flags.olderThan, '--older-than');
      const output = createOutput();
      const db = openDb(settingsFor(command));
      try {
        const report = pruneTurns(db, new Date(Date.now() - ms), Boolean(flags.dryRun));
        if (flags.json) output.json(report);
        else output.out(describe(report));
      } finally {
        db.close();
      }
    });
}

function describe(report: PruneReport): string {
  const verb = report.dryRun ? 'Would remove' : 'Removed';
  return `${verb} ${report.turns} turn${report.turns === 1 ? '' : 's'} (${report.retrievalRows} retrieval rows) and ${report.sessions} emptied session${report.sessions === 1 ? '' : 's'} older than ${report.cutoff}.`;
}

/** Applies `history.retention` (if set) when chat starts; says so only when something was removed. */
export function applyRetention(db: Db, config: Config, output: Output): void {
  const retention = config.history.retention;
  if (!retention) return;
  const ms = parseDuration(retention, 'history.retention');
  const report = pruneTurns(db, new Date(Date.now() - ms));
  if (report.turns > 0) output.err(output.errColor.dim(`history.retention ${retention}: ${describe(report).toLowerCase()}`));
}
