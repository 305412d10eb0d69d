// `ragline migrate --from <db> --to <db>`: an SQLite file to Postgres, or back. The
// copy and its check are src/app/migrate.ts; this file parses, shows progress on
// stderr and prints the summary.

import type { Command } from 'commander';
import { migrate, type MigrateProgress } from '../../app/migrate.js';
import { settingsFor } from '../context.js';
import { ioOf } from '../io.js';
import { outputFor, ProgressLine, type Output } from '../output.js';
import { count } from '../../util/words.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('copy the index and the sessions from one database to another: an SQLite file to Postgres, or back')
    .requiredOption('--from <db>', 'the database to copy: an SQLite file or a postgres:// URL (read only)')
    .requiredOption('--to <db>', 'the database to copy into: an SQLite file (made when missing) or a postgres:// URL')
    .option('--force', 'copy into a database that holds documents or sessions already (a document at the same folder and path is replaced; sessions are added)')
    .option('--json', 'print the summary as JSON')
    .addHelpText(
      'after',
      `
Examples:
  ragline migrate --from ~/.local/share/ragline/ragline.db --to postgres://me@db.internal/docs
  ragline migrate --from postgres://me@db.internal/docs --to ./mine.db --json

Documents, chunks and vectors are copied (the keyword index is rebuilt from the
chunks), and the sessions with their turns, retrieved chunks and judgments. On
Postgres the sessions are the user's (RAGLINE_USER, else the role). The copy is one
transaction on the target; then every count and a sample of turns are checked.`,
    )
    .action(async (flags: { from: string; to: string; force?: boolean; json?: boolean }, command: Command) => {
      const output = outputFor(command);
      const progress = new ProgressLine(ioOf(command).stderr);
      const summary = await migrate({
        from: flags.from,
        to: flags.to,
        force: flags.force,
        user: settingsFor(command).config.user,
        onProgress: (step) => report(step, output, progress),
      });
      progress.clear();
      if (flags.json) return output.json(summary);
      const { copied } = summary;
      output.out(`Copied ${count(copied.documents, 'document')} (${count(copied.chunks, 'chunk')}, ${count(copied.vectors, 'vector')}) and ${count(copied.sessions, 'session')} (${count(copied.turns, 'turn')}, ${count(copied.judgedDocuments, 'judged document')}) from ${summary.from} to ${summary.to}${summary.owner ? `, as ${summary.owner}` : ''}.`);
      output.out(`Checked: every count, and ${count(summary.turnsCompared, 'turn')} compared field by field (${summary.seconds.toFixed(1)} s).`);
    });
}

function report(step: MigrateProgress, output: Output, progress: ProgressLine): void {
  if (step.phase === 'start') {
    const { source } = step;
    output.err(`copying ${count(source.documents, 'document')} (${count(source.chunks, 'chunk')}) and ${count(source.sessions, 'session')} (${count(source.turns, 'turn')})`);
  } else if (step.phase === 'check') {
    progress.clear();
    output.err('checking the copy');
  } else {
    progress.update(`${step.phase} ${step.done}/${step.total}`);
    if (step.done === step.total) {
      progress.clear();
      output.err(`${step.phase} ${step.done}/${step.total}`);
    }
  }
}
