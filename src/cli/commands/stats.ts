// `ragline stats`: what is in the database.

import type { Command } from 'commander';
import { stats } from '../../app/stats.js';
import { openWorkspaceFor, settingsFor } from '../context.js';
import { outputFor, formatBytes } from '../output.js';
import { oneLine } from '../../util/sanitize.js';

export function registerStats(program: Command): void {
  program
    .command('stats')
    .description('documents, chunks, database size, embedder, chunk settings and the last ingest that changed something')
    .option('--json', 'print as JSON')
    .action(async (flags: { json?: boolean }, command: Command) => {
      const output = outputFor(command);
      const workspace = openWorkspaceFor(settingsFor(command));
      try {
        const found = stats(workspace);
        if (flags.json) return output.json(found);
        const { color } = output;
        // Paths and the embedder id come from outside: shown through the sanitiser.
        const row = (label: string, value: string) => output.out(`${color.dim(label.padEnd(12))} ${oneLine(value)}`);
        const { lastIngest } = found;
        row('database', `${found.db} (${formatBytes(found.sizeBytes)}, schema ${found.schemaVersion})`);
        row('documents', String(found.documents));
        row('chunks', String(found.chunks));
        row('embedder', found.embedder ? `${found.embedder} (${found.dimensions} dimensions)` : 'none yet');
        row('chunking', found.chunker ? `size ${found.chunker.size}, overlap ${found.chunker.overlap} characters` : 'none yet');
        row('sessions', `${found.sessions} (${found.turns} turns)`);
        row('last ingest', lastIngest ? `${lastIngest.finishedAt} from ${lastIngest.root} (${lastIngest.seconds.toFixed(1)}s)` : 'never');
      } finally {
        await workspace.close();
      }
    });
}
