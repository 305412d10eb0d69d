#!/usr/bin/env node
// Does unicode61Tokens (src/text/unicode61.ts) give, chunk for chunk, the terms FTS5 holds
// in a real ragline index? For each database, every chunk's text is tokenized in JS and
// the per-term document and occurrence counts are compared with:
//   1. a fresh :memory: FTS5 table over the same texts with `unicode61 remove_diacritics 2`
//      (the tokenizer alone, before stemming);
//   2. the body column of the database's own chunks_fts (`porter unicode61 ...`), the JS
//      terms stemmed by SQLite's porter (read per distinct term from a :memory: table) and
//      by ftsStem (src/text/stem.ts).
// Both JS tokenizers are timed on the same texts first.
//
//   npm run build && node bench/lab/unicode61-parity.mjs [db ...]
//
// Defaults to bench/out/mtrag/cloud.db and fiqa.db (from bench/mtrag/run.mjs), opened
// read-only.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { unicode61Tokens } = await import(path.join(root, 'dist/text/unicode61.js'));
const { tokenize } = await import(path.join(root, 'dist/text/tokenize.js'));
const { ftsStem } = await import(path.join(root, 'dist/text/stem.js'));
const { openFts5Oracle } = await import(path.join(root, 'test/helpers/fts5-terms.mjs'));

const files = process.argv.slice(2);
if (files.length === 0) files.push(...['cloud', 'fiqa'].map((d) => path.join(root, 'bench/out/mtrag', `${d}.db`)));

/** term -> [documents, occurrences] over `termLists`, one list per document. */
function countTerms(termLists, map = (t) => t) {
  const counts = new Map();
  for (const terms of termLists) {
    const seen = new Set();
    for (const raw of terms) {
      const term = map(raw);
      let c = counts.get(term);
      if (!c) counts.set(term, (c = [0, 0]));
      c[1]++;
      if (!seen.has(term)) {
        seen.add(term);
        c[0]++;
      }
    }
  }
  return counts;
}

/** Terms whose counts differ between two countTerms maps, a few shown. */
function diff(label, js, sqlite) {
  const bad = [];
  for (const [term, [doc, cnt]] of sqlite) {
    const c = js.get(term);
    if (!c || c[0] !== doc || c[1] !== cnt) bad.push(`${JSON.stringify(term)} js=${c ? c.join('/') : '-'} sqlite=${doc}/${cnt}`);
  }
  for (const [term, c] of js) if (!sqlite.has(term)) bad.push(`${JSON.stringify(term)} js=${c.join('/')} sqlite=-`);
  console.log(`  ${label}: ${sqlite.size} terms in SQLite, ${js.size} in JS, ${bad.length} differ`);
  for (const line of bad.slice(0, 8)) console.log(`    ${line}`);
}

/** Terms per row of a (term, doc, cnt) vocabulary query. */
function vocab(db, sql) {
  const counts = new Map();
  for (const [term, doc, cnt] of db.prepare(sql).raw().iterate()) counts.set(term, [doc, cnt]);
  return counts;
}

// Speed first, while the heap is small.
const allTexts = [];
for (const file of files) {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  allTexts.push(...db.prepare('SELECT text FROM chunks').pluck().all());
  db.close();
}
const mb = allTexts.reduce((sum, text) => sum + Buffer.byteLength(text), 0) / 1e6;
console.log(`speed over ${allTexts.length} chunks, ${mb.toFixed(1)} MB (median of 9 passes, alternating):`);
const runs = { tokenize: [], unicode61Tokens: [] };
for (let pass = 0; pass < 9; pass++) {
  for (const [name, fn] of [['tokenize', (t) => tokenize(t)], ['unicode61Tokens', unicode61Tokens]]) {
    const t0 = performance.now();
    for (const text of allTexts) fn(text);
    runs[name].push((performance.now() - t0) / 1000);
  }
}
for (const [name, times] of Object.entries(runs)) {
  times.sort((a, b) => a - b);
  console.log(`  ${name}: ${(mb / times[4]).toFixed(1)} MB/s (best ${(mb / times[0]).toFixed(1)})`);
}

for (const file of files) {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const texts = db.prepare('SELECT text FROM chunks ORDER BY id').pluck().all();
  console.log(`${path.relative(root, file)}: ${texts.length} chunks`);
  const jsTerms = texts.map(unicode61Tokens);

  // 1. The tokenizer alone.
  const oracle = openFts5Oracle();
  const sqliteTerms = countTerms(oracle.terms(texts));
  oracle.close();
  diff('unicode61 alone', countTerms(jsTerms), sqliteTerms);
  diff('tokenize() for comparison', countTerms(texts.map((text) => tokenize(text))), sqliteTerms);

  // 2. The database's own index, body column.
  db.exec('CREATE VIRTUAL TABLE temp.vc USING fts5vocab(main, chunks_fts, col)');
  const body = vocab(db, "SELECT term, doc, cnt FROM temp.vc WHERE col = 'body'");
  const distinct = [...new Set(jsTerms.flat())];
  const refold = distinct.filter((term) => JSON.stringify(unicode61Tokens(term)) !== JSON.stringify([term]));
  if (refold.length) console.log(`  ${refold.length} terms do not tokenize to themselves, their porter stem is a guess`);
  const porterOracle = openFts5Oracle('porter unicode61 remove_diacritics 2');
  const stems = porterOracle.terms(distinct);
  porterOracle.close();
  const porter = new Map(distinct.map((term, k) => [term, stems[k][0]]));
  diff("chunks_fts body, SQLite's porter", countTerms(jsTerms, (t) => porter.get(t)), body);
  diff('chunks_fts body, ftsStem', countTerms(jsTerms, ftsStem), body);
  db.close();
}

