#!/usr/bin/env node
// The keyword index's totals (FTS5's row count and tokens per column, what bm25 weighs
// by) across incremental re-ingests. Copies a folder of real docs (the CMake help on
// this machine by default) to bench/out/fts-totals/docs, ingests it, then for each of
// R rounds edits a share of the files (a line appended: every chunk of an edited file
// is written again) and removes a few, and re-ingests. After each round it compares
// the re-ingested index with a fresh ingest of the same files: the totals record, and
// the keyword top 10 (FTS5 bm25, weights 4 and 1) for queries made of the documents'
// titles. Then it times a rewrite of the keyword index from the stored chunks.
// Runs the built code (dist/): `npm run build` first. Skips when the folder is absent.
//
//   node bench/ingest/fts-totals.mjs [--docs /usr/share/cmake-3.25/Help] [--rounds 6] [--share 0.2] [--queries 200]

import fs from 'node:fs';
import path from 'node:path';
import { arg, option, root, seededRandom } from '../turn/common.mjs';
const source = option('docs', '/usr/share/cmake-3.25/Help');
const rounds = arg('rounds', 6);
const share = arg('share', 0.2);
const queryCount = arg('queries', 200);
if (!fs.existsSync(source)) {
  console.log(`skipped: ${source} is not on this machine`);
  process.exit(0);
}

const { ingest } = await import(path.join(root, 'dist/ingest/ingest.js'));
const { indexText } = await import(path.join(root, 'dist/ingest/index-text.js'));
const { OfflineEmbedder } = await import(path.join(root, 'dist/providers/offline-embedder.js'));
const { openDatabase } = await import(path.join(root, 'dist/store/db.js'));
const { buildFtsQuery } = await import(path.join(root, 'dist/retrieve/fts-query.js'));

const out = path.join(root, 'bench/out/fts-totals');
const docs = path.join(out, 'docs');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
fs.cpSync(source, docs, { recursive: true });

const random = seededRandom(7);
const files = () => fs.readdirSync(docs, { recursive: true }).map(String).filter((f) => fs.statSync(path.join(docs, f)).isFile()).sort();

const embedder = new OfflineEmbedder();
const run = async (dbFile) => {
  const db = openDatabase(dbFile, { create: true });
  try {
    const started = performance.now();
    const summary = await ingest({ root: docs, db, embedder, chunker: { size: 3000, overlap: 150 }, maxFileBytes: 20 * 1024 * 1024 });
    return { seconds: (performance.now() - started) / 1000, summary };
  } finally {
    db.close();
  }
};

/** FTS5's totals record as numbers: rows, then tokens per column. */
function totals(db) {
  const block = db.prepare('SELECT block FROM chunks_fts_data WHERE id = 1').pluck().get();
  const values = [];
  for (let at = 0; at < block.length; ) {
    let value = 0;
    for (;;) {
      const byte = block[at++];
      value = value * 128 + (byte & 0x7f);
      if (byte < 0x80) break;
    }
    values.push(value);
  }
  return values;
}

// Queries: the titles of a fixed sample of the documents (first line of the file).
const queries = [];
for (const file of files()) {
  if (random() > (queryCount * 1.5) / 2000) continue;
  const first = fs.readFileSync(path.join(docs, file), 'utf8').split('\n').find((line) => /\w/.test(line) && !line.startsWith('..'));
  const match = first && buildFtsQuery(first.replace(/[`*_<>]/g, ' '));
  if (match) queries.push(match);
  if (queries.length >= queryCount) break;
}

/** Top 10 per query as "path:start line" with its bm25. */
function topTen(db) {
  const search = db.prepare(
    `SELECT d.path || ':' || c.start_line AS key, bm25(chunks_fts, 4, 1) AS score FROM chunks_fts f JOIN chunks c ON c.id = f.rowid JOIN documents d ON d.id = c.document_id
     WHERE chunks_fts MATCH ? ORDER BY score, f.rowid LIMIT 10`,
  );
  return queries.map((match) => search.all(match));
}

function compare(a, b) {
  let same = 0, sameScores = 0, overlap = 0, total = 0, scoreDiff = 0, scoreSum = 0;
  a.forEach((hits, i) => {
    const want = b[i];
    if (hits.map((h) => h.key).join() === want.map((h) => h.key).join()) same++;
    const keys = new Set(want.map((h) => h.key));
    overlap += hits.filter((h) => keys.has(h.key)).length;
    total += want.length;
    // Ties are broken by chunk id, which differ between the two databases: the scores in rank order are compared.
    if (hits.length === want.length && hits.every((h, k) => Math.abs(h.score - want[k].score) < 1e-9)) sameScores++;
    const wantScore = new Map(want.map((h) => [h.key, h.score]));
    for (const h of hits) {
      if (!wantScore.has(h.key)) continue;
      scoreDiff += Math.abs(h.score - wantScore.get(h.key));
      scoreSum += Math.abs(wantScore.get(h.key));
    }
  });
  return { sameScores: sameScores / a.length, sameOrder: same / a.length, overlap: overlap / total, relScoreDiff: scoreDiff / Math.max(1e-12, scoreSum) };
}

const driftFile = path.join(out, 'drift.db');
const first = await run(driftFile);
console.log(`${first.summary.files.added} files, ${first.summary.chunks.written} chunks, first ingest ${first.seconds.toFixed(1)} s, ${queries.length} queries`);
console.log('| round | files edited / removed | re-ingest s | live chunks | rows in totals | excess rows | body tokens vs fresh | top-10 scores as fresh | top 10 same order | top-10 overlap | bm25 diff (sum abs / sum) |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (let round = 1; round <= rounds; round++) {
  const all = files();
  let edited = 0, removed = 0;
  for (const file of all) {
    const r = random();
    if (r < 0.01) {
      fs.rmSync(path.join(docs, file));
      removed++;
    } else if (r < 0.01 + share) {
      fs.appendFileSync(path.join(docs, file), `\nEdited in round ${round}.\n`);
      edited++;
    }
  }
  const again = await run(driftFile);
  const freshFile = path.join(out, 'fresh.db');
  fs.rmSync(freshFile, { force: true });
  await run(freshFile);
  const drift = openDatabase(driftFile);
  const fresh = openDatabase(freshFile);
  const live = drift.prepare('SELECT count(*) FROM chunks').pluck().get();
  const [rows, , body] = totals(drift);
  const [freshRows, , freshBody] = totals(fresh);
  if (freshRows !== live) throw new Error(`fresh index holds ${freshRows} rows for ${live} chunks`);
  const c = compare(topTen(drift), topTen(fresh));
  console.log(
    `| ${round} | ${edited} / ${removed} | ${again.seconds.toFixed(2)} | ${live} | ${rows} | ${(((rows - live) / live) * 100).toFixed(0)}% | ${((body / freshBody) * 100).toFixed(0)}% | ${(c.sameScores * 100).toFixed(1)}% | ${(c.sameOrder * 100).toFixed(1)}% | ${(c.overlap * 100).toFixed(1)}% | ${(c.relScoreDiff * 100).toFixed(1)}% |`,
  );
  drift.close();
  fresh.close();
}

// The cost of writing the keyword index again from the stored chunks.
const db = openDatabase(driftFile);
const started = performance.now();
db.transaction(() => {
  db.exec("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')");
  const insert = db.prepare('INSERT INTO chunks_fts (rowid, title, body) VALUES (?, ?, ?)');
  const rows = db.prepare('SELECT c.id AS id, d.title AS title, c.heading AS heading, c.text AS text FROM chunks c JOIN documents d ON d.id = c.document_id ORDER BY c.id').all();
  for (const row of rows) {
    const { fts } = indexText(row.title ?? undefined, row.heading ? row.heading.split(' > ') : [], row.text);
    insert.run(row.id, fts.title, fts.body);
  }
})();
const rewriteSeconds = (performance.now() - started) / 1000;
const fresh = openDatabase(path.join(out, 'fresh.db'));
console.log(`rewrite of the keyword index from ${db.prepare('SELECT count(*) FROM chunks').pluck().get()} stored chunks: ${rewriteSeconds.toFixed(2)} s; totals after it ${JSON.stringify(totals(db))}, fresh ${JSON.stringify(totals(fresh))}`);
console.log(`top 10 after the rewrite vs fresh: ${JSON.stringify(compare(topTen(db), topTen(fresh)))}`);
db.close();
fresh.close();
