#!/usr/bin/env node
// What a one-shot `ragline search` at 100k chunks cannot avoid, each part timed in a
// fresh process (cold, as the command runs) on the real-text database that
// turn-cost.mjs builds, with ragline's own connection settings (mmap, cache):
//   - fts:       the keyword side as FTS5 answers it (the question's terms, 300 deep,
//                and its word pairs as phrases, 100 deep);
//   - vec0:      sqlite-vec's exact KNN, k = 100;
//   - read int8 / read int4: reading a compact copy of every vector (int8: 384 B,
//                int4: 192 B per vector) stored as one blob per 1024 vectors, from a
//                scratch database built here (and once with SQLite's mmap off);
//   - 300 lookups: 300 exact vectors read back from vec0 by rowid (a float rerank);
//   - worker start: a worker thread's first message (what running the two sides
//                side by side would cost first).
// Then, in this process, the recall of a quantized first pass followed by an exact
// rerank of its best R, against the exact top 10 and top 100, on the real vectors
// and 200 MTRAG questions: sign bits (asymmetric: float query), ternary, int4, int8.
//
//   node bench/turn/oneshot-floor.mjs [--chunks 100000] [--runs 15] [--questions 200]

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { arg, existingTurnDb, mtragQuestions, root } from './common.mjs';

const chunks = arg('chunks', 100_000);
const runs = arg('runs', 15);
const questionCount = arg('questions', 200);
const dbPath = existingTurnDb(chunks);
const codesPath = path.join(root, `bench/out/turn/codes-${chunks}.db`);
const D = 384;
const dist = (file) => path.join(root, 'dist', file);

/** Every live vector of the vec0 table, as [ids, one Float32Array of all vectors]. */
function readVectors(db) {
  const rows = db.prepare('SELECT c.size, c.validity, c.rowids, v.vectors FROM vec_chunks_chunks c JOIN vec_chunks_vector_chunks00 v ON v.rowid = c.chunk_id ORDER BY c.chunk_id').all();
  const ids = [];
  const parts = [];
  for (const row of rows) {
    const rowids = new BigInt64Array(row.rowids.buffer.slice(row.rowids.byteOffset, row.rowids.byteOffset + row.rowids.length));
    const vectors = new Float32Array(row.vectors.buffer.slice(row.vectors.byteOffset, row.vectors.byteOffset + row.vectors.length));
    for (let i = 0; i < row.size; i++) {
      if (!(row.validity[i >> 3] & (1 << (i & 7)))) continue;
      ids.push(Number(rowids[i]));
      parts.push(vectors.subarray(i * D, (i + 1) * D));
    }
  }
  const all = new Float32Array(parts.length * D);
  parts.forEach((v, i) => all.set(v, i * D));
  return [ids, all];
}

/** Per-vector scale and codes in [-max, max]. */
function quantize(all, n, max) {
  const codes = new Int8Array(n * D);
  const scales = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let top = 0;
    for (let j = 0; j < D; j++) top = Math.max(top, Math.abs(all[i * D + j]));
    scales[i] = top / max || 1;
    for (let j = 0; j < D; j++) codes[i * D + j] = Math.round(all[i * D + j] / scales[i]);
  }
  return { codes, scales };
}

if (process.argv[2] === '--child') {
  const [part, i] = [process.argv[3], Number(process.argv[4])];
  const { openDatabase } = await import(dist('store/db.js'));
  const db = openDatabase(part.startsWith('read') ? codesPath : dbPath, { readonly: true });
  let work;
  if (part === 'fts') {
    const { buildFtsQuery, buildFtsPhraseQuery } = await import(dist('retrieve/fts-query.js'));
    const q = mtragQuestions()[i];
    const statement = db.prepare('SELECT rowid AS id, bm25(chunks_fts, 4, 1) AS bm25 FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25, rowid LIMIT ?');
    const terms = buildFtsQuery(q);
    const phrases = buildFtsPhraseQuery(q);
    work = () => {
      statement.all(terms, 300);
      if (phrases) statement.all(phrases, 100);
    };
  } else if (part === 'vec0') {
    const { OfflineEmbedder } = await import(dist('providers/offline-embedder.js'));
    const [vector] = await new OfflineEmbedder().embed([mtragQuestions()[i]]);
    const statement = db.prepare('SELECT rowid AS id, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? ORDER BY distance');
    work = () => statement.all(Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength), 100);
  } else if (part.startsWith('read')) {
    if (part.endsWith('mmap off')) db.pragma('mmap_size = 0');
    const statement = db.prepare(`SELECT codes, scales FROM ${part.startsWith('read int8') ? 'codes8' : 'codes4'}`);
    work = () => {
      let bytes = 0;
      for (const row of statement.iterate()) bytes += row.codes.length + row.scales.length;
      return bytes;
    };
  } else if (part === 'worker start') {
    const { Worker } = await import('node:worker_threads');
    const started = performance.now();
    const worker = new Worker("require('node:worker_threads').parentPort.postMessage(0)", { eval: true });
    await new Promise((resolve) => worker.once('message', resolve));
    console.log(JSON.stringify({ ms: performance.now() - started }));
    process.exit(0);
  } else if (part === '300 lookups') {
    const ids = db.prepare('SELECT rowid FROM vec_chunks ORDER BY random() LIMIT 300').pluck().all();
    const statement = db.prepare('SELECT embedding FROM vec_chunks WHERE rowid = ?');
    work = () => ids.forEach((id) => statement.get(BigInt(id)));
  }
  const started = performance.now();
  work();
  console.log(JSON.stringify({ ms: performance.now() - started }));
  process.exit(0);
}

const { openDatabase } = await import(dist('store/db.js'));
const source = openDatabase(dbPath, { readonly: true });
const [ids, all] = readVectors(source);
source.close();
const n = ids.length;

if (!fs.existsSync(codesPath)) {
  // One row per 1024 vectors, as vec0 groups them.
  fs.rmSync(codesPath, { force: true });
  const db = openDatabase(codesPath, { create: true });
  db.exec('CREATE TABLE codes8 (block INTEGER PRIMARY KEY, codes BLOB, scales BLOB); CREATE TABLE codes4 (block INTEGER PRIMARY KEY, codes BLOB, scales BLOB);');
  const int8 = quantize(all, n, 127);
  const int4 = quantize(all, n, 7);
  const insert8 = db.prepare('INSERT INTO codes8 VALUES (?, ?, ?)');
  const insert4 = db.prepare('INSERT INTO codes4 VALUES (?, ?, ?)');
  db.transaction(() => {
    for (let block = 0; block * 1024 < n; block++) {
      const from = block * 1024, to = Math.min(n, from + 1024);
      insert8.run(block, Buffer.from(int8.codes.buffer, from * D, (to - from) * D), Buffer.from(int8.scales.buffer, from * 4, (to - from) * 4));
      const packed = new Uint8Array(((to - from) * D) / 2);
      for (let k = 0; k < (to - from) * D; k++) packed[k >> 1] |= (int4.codes[from * D + k] & 15) << ((k & 1) * 4);
      insert4.run(block, Buffer.from(packed.buffer), Buffer.from(int4.scales.buffer, from * 4, (to - from) * 4));
    }
  })();
  db.close();
}

const pct = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))];
console.log(`\nA one-shot search's parts at ${n} chunks, each in a fresh process, ${runs} runs\n`);
console.log('| part | p50 ms | p95 ms |');
console.log('|---|---|---|');
for (const part of ['fts', 'vec0', 'read int8', 'read int4', 'read int4, mmap off', '300 lookups', 'worker start']) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const result = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', part, String(20 + i)], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(result.stderr);
    times.push(JSON.parse(result.stdout).ms);
  }
  console.log(`| ${part} | ${pct(times, 0.5).toFixed(1)} | ${pct(times, 0.95).toFixed(1)} |`);
}

// Recall of quantized first passes, reranked exactly.
const { OfflineEmbedder } = await import(dist('providers/offline-embedder.js'));
const queries = await new OfflineEmbedder().embed(mtragQuestions().slice(0, questionCount));
const scoresOf = (q, score) => {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = score(q, i * D, i);
  return out;
};
/** Indices of the `k` highest scores, best first. */
const top = (scores, k) => {
  const threshold = Float32Array.from(scores).sort()[Math.max(0, n - k)];
  const picked = [];
  for (let i = 0; i < n; i++) if (scores[i] >= threshold) picked.push(i);
  return picked.sort((a, b) => scores[b] - scores[a]).slice(0, k);
};
const exactScore = (q, at) => {
  let d = 0;
  for (let j = 0; j < D; j++) d += q[j] * all[at + j];
  return d;
};
const exact = queries.map((q) => {
  const scores = scoresOf(q, exactScore);
  return { scores, best: top(scores, 100) };
});
const int8 = quantize(all, n, 127);
const int4 = quantize(all, n, 7);
const ternary = new Int8Array(n * D);
const ternaryNorm = new Float32Array(n);
for (let i = 0; i < n; i++) {
  let squares = 0;
  for (let j = 0; j < D; j++) squares += all[i * D + j] ** 2;
  const cut = Math.sqrt(squares / D);
  let nonzero = 0;
  for (let j = 0; j < D; j++) {
    const x = all[i * D + j];
    ternary[i * D + j] = x > cut ? 1 : x < -cut ? -1 : 0;
    nonzero += ternary[i * D + j] !== 0 ? 1 : 0;
  }
  ternaryNorm[i] = 1 / Math.sqrt(nonzero || 1);
}
const codeScore = ({ codes, scales }) => (q, at, i) => {
  let d = 0;
  for (let j = 0; j < D; j++) d += q[j] * codes[at + j];
  return d * scales[i];
};
const kinds = {
  'sign bits (48 B)': (q, at) => {
    let d = 0;
    for (let j = 0; j < D; j++) d += all[at + j] > 0 ? q[j] : -q[j];
    return d;
  },
  'ternary, cut at the rms (96 B)': (q, at, i) => {
    let d = 0;
    for (let j = 0; j < D; j++) d += q[j] * ternary[at + j];
    return d * ternaryNorm[i];
  },
  'int4 (192 B)': codeScore(int4),
  'int8 (384 B)': codeScore(int8),
};
const depths = [100, 300, 1000, 3000];
console.log(`\nRecall of a quantized first pass + exact rerank of its best R (${queries.length} MTRAG questions, ${n} real vectors)\n`);
console.log(`| first pass | ${depths.map((r) => `R=${r}: r@10 / r@100`).join(' | ')} |`);
console.log(`|---|${depths.map(() => '---').join('|')}|`);
for (const [name, score] of Object.entries(kinds)) {
  const sums = depths.map(() => [0, 0]);
  queries.forEach((q, qi) => {
    const candidates = top(scoresOf(q, score), Math.max(...depths));
    const { scores, best } = exact[qi];
    depths.forEach((r, di) => {
      const kept = new Set(candidates.slice(0, r).sort((a, b) => scores[b] - scores[a]).slice(0, 100));
      sums[di][0] += best.slice(0, 10).filter((i) => kept.has(i)).length / 10;
      sums[di][1] += best.filter((i) => kept.has(i)).length / 100;
    });
  });
  console.log(`| ${name} | ${sums.map(([a, b]) => `${(a / queries.length).toFixed(3)} / ${(b / queries.length).toFixed(3)}`).join(' | ')} |`);
}
