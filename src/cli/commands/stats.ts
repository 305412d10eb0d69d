// `ragline stats`: what is in the database.

import path from 'node:path';
import type { Command } from 'commander';
import { statsOf } from '../../app/stats.js';
import { openWorkspaceFor, settingsFor } from '../context.js';
import { outputFor, formatBytes } from '../output.js';
import { oneLine } from '../../util/sanitize.js';
import { count } from '../../util/words.js';

export function registerStats(program: Command): void {
  program
    .command('stats')
    .description('documents, chunks, the folders they come from, database size, embedder, chunk settings and the last ingest that changed something')
    .option('--json', 'print as JSON')
    .action(async (flags: { json?: boolean }, command: Command) => {
      const output = outputFor(command);
      const workspace = openWorkspaceFor(settingsFor(command));
      try {
        const found = await statsOf(workspace);
        if (flags.json) return output.json(found);
        const { color } = output;
        // Paths and the embedder id come from outside: shown through the sanitiser.
        const row = (label: string, value: string) => output.out(`${color.dim(label.padEnd(12))} ${oneLine(value)}`);
        const { lastIngest } = found;
        row('database', `${found.db} (${formatBytes(found.sizeBytes)}, schema ${found.schemaVersion})`);
        row('documents', String(found.documents));
        row('chunks', String(found.chunks));
        if (found.folders.length === 0) row('folders', 'none yet');
        found.folders.forEach((folder, i) =>
          row(i === 0 ? (found.folders.length === 1 ? 'folder' : 'folders') : '', `${folder.root} (${count(folder.documents, 'document')}, ${count(folder.chunks, 'chunk')})`),
        );
        row('embedder', found.embedder ? `${found.embedder} (${found.dimensions} dimensions)` : 'none yet');
        row('chunking', found.chunker ? `size ${found.chunker.size}, overlap ${found.chunker.overlap} characters` : 'none yet');
        if (found.keywordSearch) row('keywords', found.keywordSearch === 'bm25' ? 'BM25 (pg_textsearch)' : 'full-text search (ts_rank_cd; pg_textsearch is not installed)');
        row('sessions', `${found.sessions} (${count(found.turns, 'turn')})`);
        row('last ingest', lastIngest ? `${lastIngest.finishedAt} from ${ingestedFrom(lastIngest)} (${lastIngest.seconds.toFixed(1)}s)` : 'never');
      } finally {
        await workspace.close();
      }
    });
}

/** Where the last ingest read: its folder, or the file it was given ("docs/faq.md"), or the folder and how many files. */
function ingestedFrom(last: { root: string; only?: string[] }): string {
  if (!last.only) return last.root;
  if (last.only.length === 1) return path.join(last.root, last.only[0]!).replace(/[\\/]$/, '');
  return `${last.root} (${count(last.only.length, 'file')})`;
}
