// `ragline documents`: the documents the index holds, one line each.

import type { Command } from 'commander';
import { listIndexedDocuments } from '../../app/documents.js';
import { formatBytes } from '../../util/bytes.js';
import { oneLine } from '../../util/sanitize.js';
import { stamp } from '../../util/time.js';
import { count } from '../../util/words.js';
import { openWorkspaceFor, settingsFor } from '../context.js';
import { outputFor } from '../output.js';

export function registerDocuments(program: Command): void {
  program
    .command('documents')
    .alias('docs')
    .description('the indexed documents: path, kind, chunks, size and when each was ingested')
    .option('--json', 'print as JSON')
    .action(async (flags: { json?: boolean }, command: Command) => {
      const output = outputFor(command);
      const workspace = openWorkspaceFor(settingsFor(command));
      try {
        const documents = listIndexedDocuments(workspace);
        if (flags.json) return output.json(documents);
        if (documents.length === 0) {
          output.out('No documents are indexed yet. Add some with `ragline ingest <folder>`.');
          return;
        }
        const { color } = output;
        // Paths come from the disk: shown through the sanitiser.
        const paths = documents.map((doc) => oneLine(doc.path, 200));
        const width = Math.min(60, Math.max(4, ...paths.map((p) => p.length)));
        const kinds = Math.max(4, ...documents.map((doc) => doc.kind.length));
        output.out(color.dim(`${'path'.padEnd(width)}  ${'kind'.padEnd(kinds)}  ${'chunks'.padStart(6)}  ${'size'.padStart(9)}  ingested`));
        documents.forEach((doc, i) => {
          output.out(`${paths[i]!.padEnd(width)}  ${doc.kind.padEnd(kinds)}  ${String(doc.chunks).padStart(6)}  ${formatBytes(doc.size).padStart(9)}  ${stamp(doc.ingestedAt)}`);
        });
        const chunks = documents.reduce((sum, doc) => sum + doc.chunks, 0);
        output.out(color.dim(`${count(documents.length, 'document')}, ${count(chunks, 'chunk')}`));
      } finally {
        await workspace.close();
      }
    });
}
