// `ragline stats`: what is in the database.

import fs from 'node:fs';
import type { Command } from 'commander';
import { indexCounts } from '../../store/documents.js';
import { getFingerprint, getMeta } from '../../store/meta.js';
import { SCHEMA_VERSION } from '../../store/migrations.js';
import { openDb, settingsFor } from '../context.js';
import { createOutput, formatBytes } from '../output.js';
import { oneLine } from '../../util/sanitize.js';

export function registerStats(program: Command): void {
  program
    .command('stats')
    .description('documents, chunks, database size, embedder, chunk settings and the last ingest that changed something')
    .option('--json', 'print as JSON')
    .action((flags: { json?: boolean }, command: Command) => {
      const output = createOutput();
      const settings = settingsFor(command);
      const db = openDb(settings);
      try {
        const counts = indexCounts(db);
        const fingerprint = getFingerprint(db);
        const last = getMeta(db, 'ingest.last');
        const sessions = (db.prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n;
        const turns = (db.prepare('SELECT count(*) AS n FROM turns').get() as { n: number }).n;
        const file = settings.config.db;
        const size = ['', '-wal'].reduce((sum, suffix) => sum + (fs.existsSync(file + suffix) ? fs.statSync(file + suffix).size : 0), 0);
        const lastIngest = last ? (JSON.parse(last) as { root: string; finishedAt: string; seconds: number }) : undefined;
        const stats = {
          db: file,
          schemaVersion: SCHEMA_VERSION,
          sizeBytes: size,
          documents: counts.documents,
          chunks: counts.chunks,
          embedder: fingerprint?.embedder ?? null,
          dimensions: fingerprint?.dimensions ?? null,
          chunker: fingerprint?.chunker ?? null,
          sessions,
          turns,
          lastIngest: lastIngest ? { root: lastIngest.root, finishedAt: lastIngest.finishedAt, seconds: lastIngest.seconds } : null,
        };
        if (flags.json) return output.json(stats);
        const { color } = output;
        // Paths and the embedder id come from outside: shown through the sanitiser.
        const row = (label: string, value: string) => output.out(`${color.dim(label.padEnd(12))} ${oneLine(value)}`);
        row('database', `${file} (${formatBytes(size)}, schema ${SCHEMA_VERSION})`);
        row('documents', String(counts.documents));
        row('chunks', String(counts.chunks));
        row('embedder', fingerprint ? `${fingerprint.embedder} (${fingerprint.dimensions} dimensions)` : 'none yet');
        row('chunking', fingerprint ? `size ${fingerprint.chunker.size}, overlap ${fingerprint.chunker.overlap} characters` : 'none yet');
        row('sessions', `${sessions} (${turns} turns)`);
        row('last ingest', lastIngest ? `${lastIngest.finishedAt} from ${lastIngest.root} (${lastIngest.seconds.toFixed(1)}s)` : 'never');
      } finally {
        db.close();
      }
    });
}
