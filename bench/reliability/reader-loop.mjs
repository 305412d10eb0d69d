// A reader that searches in a loop on one connection (as a chat session does)
// while another process ingests, recording every error and every inconsistency
// it sees. Used by test/concurrency.test.ts; runs against the built dist/:
//   node bench/reliability/reader-loop.mjs <db> <stop-file> [k]
// Stops when <stop-file> exists; prints one JSON summary line on stdout.
//
// Even iterations call Retriever.search exactly as the CLI does. Odd iterations
// run searchWithVector inside one read transaction and check, in that same
// snapshot, that every result's chunk has its FTS row and its vector, and that
// chunks, chunks_fts and vec_chunks hold the same number of rows.

import fs from 'node:fs';
import { openDatabase } from '../../dist/store/db.js';
import { Retriever } from '../../dist/retrieve/search.js';
import { OfflineEmbedder } from '../../dist/providers/offline-embedder.js';

const [dbFile, stopFile, kArg] = process.argv.slice(2);
const k = Number(kArg ?? 5);
const queries = ['topic widget paragraph', 'document revision', 'gadget covers', 'part of document 17', 'widget-3 topic-40'];
const summary = { searches: 0, snapshotChecks: 0, errors: [], short: 0, shortPlain: 0, shortInSnapshot: 0, shortExamples: [], missingInSnapshot: 0, countMismatch: 0, minResults: Infinity };

const db = openDatabase(dbFile);
const embedder = new OfflineEmbedder();
const retriever = new Retriever(db, embedder);
const exists = {
  chunk: db.prepare('SELECT 1 FROM chunks WHERE id = ?').pluck(),
  fts: db.prepare('SELECT 1 FROM chunks_fts WHERE rowid = ?').pluck(),
  vec: db.prepare('SELECT 1 FROM vec_chunks WHERE rowid = ?').pluck(),
};
const counts = db.prepare('SELECT (SELECT count(*) FROM chunks) AS c, (SELECT count(*) FROM chunks_fts) AS f, (SELECT count(*) FROM vec_chunks) AS v');

for (let i = 0; !fs.existsSync(stopFile); i++) {
  const query = queries[i % queries.length];
  try {
    let results;
    if (i % 2 === 0) {
      results = await retriever.search(query, { k });
    } else {
      const [vector] = await embedder.embed([query], undefined, 'query');
      results = db.transaction(() => {
        const found = retriever.searchWithVector(query, vector, { k });
        for (const r of found) {
          if (!exists.chunk.get(r.chunkId) || !exists.fts.get(r.chunkId) || !exists.vec.get(BigInt(r.chunkId))) summary.missingInSnapshot++;
        }
        const n = counts.get();
        if (n.c !== n.f || n.c !== n.v) summary.countMismatch++;
        return found;
      })();
      summary.snapshotChecks++;
    }
    summary.searches++;
    summary.minResults = Math.min(summary.minResults, results.length);
    if (results.length < k) {
      summary.short++;
      if (i % 2 === 0) summary.shortPlain++;
      else summary.shortInSnapshot++;
      if (summary.shortExamples.length < 5) summary.shortExamples.push({ iteration: i, query, results: results.length, chunks: counts.get().c });
    }
  } catch (err) {
    if (summary.errors.length < 20) summary.errors.push(`${err.code ?? ''} ${err.message}`);
    else summary.errors.push('...');
  }
  await new Promise((resolve) => setImmediate(resolve));
}
db.close();
process.stdout.write(JSON.stringify(summary) + '\n');
