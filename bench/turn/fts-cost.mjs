#!/usr/bin/env node
// Where the time of an FTS5 bm25 terms query goes at 100k chunks: the whole query,
// the same with LIMIT 1, its two halves by rowid one after the other, and the two
// halves on two threads with a connection each. The queries are the terms queries
// the search builds for the MTRAG questions (src/retrieve/fts-query.ts).
//
//   node bench/turn/fts-cost.mjs [--chunks 100000] [--queries 200]
//
// Needs bench/out/turn/turn-<chunks>.db from bench/turn/turn-cost.mjs.

import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { arg, existingTurnDb, mtragQuestions, root } from './common.mjs';

const count = arg('queries', 200);
const file = existingTurnDb(arg('chunks', 100_000));
const { buildFtsQuery } = await import(path.join(root, 'dist/retrieve/fts-query.js'));
const { DEFAULT_COLUMN_WEIGHTS } = await import(path.join(root, 'dist/retrieve/search.js'));
const questions = mtragQuestions();
const matches = questions.map((q) => buildFtsQuery(q)).filter(Boolean).slice(0, count);

const weights = DEFAULT_COLUMN_WEIGHTS.join(', ');
const SQL = `SELECT rowid AS id, bm25(chunks_fts, ${weights}) AS bm25 FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25, rowid LIMIT ?`;
const RANGED = `SELECT rowid AS id, bm25(chunks_fts, ${weights}) AS bm25 FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY bm25, rowid LIMIT ?`;
const driver = createRequire(import.meta.url).resolve('better-sqlite3');
const Database = createRequire(import.meta.url)(driver);
const open = () => {
  const db = new Database(file, { readonly: true });
  db.pragma('mmap_size = 4294967296');
  db.pragma('cache_size = -65536');
  return db;
};
const db = open();
const [lo, hi] = db.prepare('SELECT min(rowid), max(rowid) FROM chunks').raw().get();
const mid = Math.floor((lo + hi) / 2);
const whole = db.prepare(SQL);
const ranged = db.prepare(RANGED);

// The helper runs the upper half when told to (shared memory: the main thread stays synchronous).
const ctrl = new Int32Array(new SharedArrayBuffer(8));
const worker = new Worker(
  `const { workerData } = require('node:worker_threads');
   const Database = require(workerData.driver);
   const db = new Database(workerData.file, { readonly: true });
   db.pragma('mmap_size = 4294967296'); db.pragma('cache_size = -65536');
   const ranged = db.prepare(workerData.sql);
   const ctrl = new Int32Array(workerData.ctrl);
   let seen = 0;
   for (;;) {
     Atomics.wait(ctrl, 0, seen); seen = Atomics.load(ctrl, 0); if (seen < 0) break;
     ranged.all(workerData.matches[ctrl[1]], workerData.mid + 1, workerData.hi, 300);
     Atomics.store(ctrl, 1, -1); Atomics.notify(ctrl, 1);
   }`,
  { eval: true, workerData: { file, driver, sql: RANGED, ctrl: ctrl.buffer, matches, mid, hi } },
);
await new Promise((resolve) => setTimeout(resolve, 500));

const t = { whole: [], limit1: [], lower: [], upper: [], twoThreads: [] };
const time = (key, fn) => {
  const started = performance.now();
  fn();
  t[key].push(performance.now() - started);
};
let seq = 0;
for (let round = 0; round < 2; round++) {
  matches.forEach((match, i) => {
    time('whole', () => whole.all(match, 300));
    time('limit1', () => whole.all(match, 1));
    time('lower', () => ranged.all(match, lo, mid, 300));
    time('upper', () => ranged.all(match, mid + 1, hi, 300));
    time('twoThreads', () => {
      ctrl[1] = i;
      Atomics.store(ctrl, 0, ++seq);
      Atomics.notify(ctrl, 0);
      ranged.all(match, lo, mid, 300);
      while (Atomics.load(ctrl, 1) !== -1) Atomics.wait(ctrl, 1, i, 100);
    });
  });
}
Atomics.store(ctrl, 0, -1);
Atomics.notify(ctrl, 0);
const stat = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${sorted[sorted.length >> 1].toFixed(1)} | ${(values.reduce((a, b) => a + b, 0) / values.length).toFixed(1)}`;
};
console.log(`\n${matches.length} terms queries (MTRAG questions), 2 rounds, ${file}\n`);
console.log('| query | p50 ms | mean ms |');
console.log('|---|---|---|');
console.log(`| whole, LIMIT 300 | ${stat(t.whole)} |`);
console.log(`| whole, LIMIT 1 | ${stat(t.limit1)} |`);
console.log(`| lower half of the rowids | ${stat(t.lower)} |`);
console.log(`| upper half of the rowids | ${stat(t.upper)} |`);
console.log(`| both halves on two threads, two connections | ${stat(t.twoThreads)} |`);
await worker.terminate();
