// `ragline search "<query>"`: one-shot hybrid retrieval, shown the way the chat shows it.

import type { Command } from 'commander';
import { search } from '../../app/search.js';
import { checkAskable } from '../../app/limits.js';
import { openWorkspaceFor, settingsFor } from '../context.js';
import { outputFor } from '../output.js';
import { chunkLine } from '../render.js';
import { DEFAULTS } from '../../config/index.js';

export function registerSearch(program: Command): void {
  program
    .command('search')
    .description('retrieve the chunks that best match a query (vector + keyword, fused)')
    .argument('<query...>', 'what to look for')
    .option('-k, --k <n>', `number of results (default ${DEFAULTS['retrieval.k']})`)
    .option('--json', 'print results as JSON (with text and score parts)')
    .addHelpText(
      'after',
      `
Each result: its rank, the fused score (higher is better; it only orders the results
of one search), where it is (file:lines), its section, the rank it had on each side
(v3 = third in the vector search, k1 = first in the keyword search, v- or k- = not
found on that side) and its text from the line that holds most of the query's words
(… when that is not its start).

Examples:
  ragline search "rotate an API key"
  ragline search -k 10 --json "webhook signature header"`,
    )
    .action(async (words: string[], flags: { k?: string; json?: boolean }, command: Command) => {
      const output = outputFor(command);
      const query = words.join(' ').trim();
      // Empty or too long: refused before the workspace is opened.
      checkAskable(query, 'query', 'Example: ragline search "rotate an API key"');
      const settings = settingsFor(command, { 'retrieval.k': flags.k });
      const workspace = openWorkspaceFor(settings);
      try {
        const found = await search(workspace, query, { k: settings.config.retrieval.k });
        const { results } = found;
        if (flags.json) {
          // Every result has every score part: null where one side did not find it.
          const parts = (chunk: (typeof results)[number]) => ({
            ...chunk,
            vectorRank: chunk.vectorRank ?? null,
            vectorDistance: chunk.vectorDistance ?? null,
            keywordRank: chunk.keywordRank ?? null,
            bm25: chunk.bm25 ?? null,
          });
          output.json({ ...found, results: results.map(parts), ms: Number(found.ms.toFixed(2)) });
          return;
        }
        if (results.length === 0) {
          const running = found.ingestRunning;
          output.err(
            running
              ? `No chunks matched while an ingest (pid ${running.pid}, started ${running.startedAt}) is writing to this database; search again when it is done.`
              : 'No chunks matched. Is anything ingested? Check with `ragline stats`.',
          );
          return;
        }
        const width = output.columns ?? 100;
        for (const result of results) output.out(chunkLine(result, output.color, width, query));
      } finally {
        await workspace.close();
      }
    });
}
