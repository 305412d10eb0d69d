#!/usr/bin/env node
// The int8 vector copy against the float32 one, on the turn database's offline-embedder
// vectors (real text) and on dense vectors made from them by a random projection (the
// same neighbourhoods, every dimension used, as a model's embeddings): recall@10 and
// @100 of the int8 copy's answers against the float32 copy's exact ones, how many
// vectors it scored again from vec0, the search time of each (interleaved, same load)
// and the memory each holds.
//
//   node bench/scale/int8-check.mjs [--chunks 100000] [--queries 200] [--dense 30000]
//
// --dense N: also N projected vectors in a temporary database (0: skip).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { arg, existingTurnDb, mtragQuestions, root, seededRandom } from '../turn/common.mjs';

const chunks = arg('chunks', 100_000);
const queryCount = arg('queries', 200);
const dense = arg('dense', 30_000);
const lib = (p) => import(path.join(root, 'dist', p));
const { openDatabase } = await lib('store/db.js');
const { createVectorTable, vectorBytes } = await lib('store/vectors.js');
const { VectorIndex } = await lib('retrieve/memory/vector-index.js');
const { OfflineEmbedder } = await lib('providers/offline-embedder.js');

const questions = mtragQuestions().slice(0, queryCount);
const embedder = new OfflineEmbedder();
const queries = (await embedder.embed(questions)).map((v) => Float32Array.from(v));

function compare(name, db, queryVectors) {
  const dim = queryVectors[0].length;
  const float32 = new VectorIndex(db, dim, { precision: 'float32' });
  const int8 = new VectorIndex(db, dim, { precision: 'int8' });
  float32.refresh();
  int8.refresh();
  const times = { float32: [], int8: [] };
  const rescored = [];
  let hit10 = 0, hit100 = 0, identical100 = 0, maxDistanceError = 0;
  for (const [i, q] of queryVectors.entries()) {
    const order = i % 2 === 0 ? ['float32', 'int8'] : ['int8', 'float32'];
    const got = {};
    for (const which of order) {
      const index = which === 'int8' ? int8 : float32;
      const started = performance.now();
      got[which] = index.search(q, 100);
      times[which].push(performance.now() - started);
    }
    rescored.push(int8.lastRescored);
    const want = got.float32, have = got.int8;
    // A tie at the cut-off (equal distance within float error) may keep either vector.
    const cut = (k) => want[Math.min(k, want.length) - 1]?.distance ?? 0;
    const recall = (k) => {
      const ids = new Set(want.slice(0, k).map((c) => c.id));
      return have.slice(0, k).filter((c) => ids.has(c.id) || Math.abs(c.distance - cut(k)) < 1e-6).length;
    };
    hit10 += recall(10) / Math.min(10, want.length);
    hit100 += recall(100) / Math.min(100, want.length);
    if (have.every((c, j) => c.id === want[j]?.id)) identical100++;
    for (let j = 0; j < Math.min(want.length, have.length); j++) maxDistanceError = Math.max(maxDistanceError, Math.abs(want[j].distance - have[j].distance));
  }
  const pct = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))];
  const n = queryVectors.length;
  console.log(
    `| ${name} | ${int8.size} | ${(hit10 / n).toFixed(4)} | ${(hit100 / n).toFixed(4)} | ${identical100}/${n} | ${maxDistanceError.toExponential(1)} | ${pct(rescored, 0.5)} / ${pct(rescored, 0.95)} | ${pct(times.float32, 0.5).toFixed(2)} / ${pct(times.int8, 0.5).toFixed(2)} | ${(float32.memoryBytes / 1048576).toFixed(0)} / ${(int8.memoryBytes / 1048576).toFixed(0)} |`,
  );
  float32.close();
  int8.close();
}

console.log(`\n${queryCount} MTRAG questions, top 100 (the hybrid search's vector candidates)\n`);
console.log('| vectors | count | recall@10 | recall@100 | identical top 100 | max distance error | rescored p50 / p95 | search p50 ms float32 / int8 | copy MB float32 / int8 |');
console.log('|---|---|---|---|---|---|---|---|---|');
const db = openDatabase(existingTurnDb(chunks));
compare('offline embedder (real text)', db, queries);

if (dense > 0) {
  // A random Gaussian projection of the offline vectors: dense, same neighbourhoods.
  const dim = queries[0].length;
  const random = seededRandom(7);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const matrix = Float32Array.from({ length: dim * dim }, gauss);
  const project = (v) => {
    const out = new Float32Array(dim);
    for (let i = 0; i < dim; i++) {
      const x = v[i];
      if (x === 0) continue;
      for (let j = 0, row = i * dim; j < dim; j++) out[j] += x * matrix[row + j];
    }
    return out;
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-int8-'));
  const projected = openDatabase(path.join(dir, 'dense.db'), { create: true });
  createVectorTable(projected, dim);
  const rows = db.prepare('SELECT rowid, embedding FROM vec_chunks ORDER BY rowid LIMIT ?').all(dense);
  const insert = projected.prepare('INSERT INTO vec_chunks (rowid, embedding) VALUES (?, ?)');
  projected.transaction(() => {
    for (const row of rows) {
      const v = new Float32Array(row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.byteLength));
      insert.run(BigInt(row.rowid), vectorBytes(project(v)));
    }
  })();
  compare(`random projection of the first ${rows.length} (dense)`, projected, queries.map(project));
  projected.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
db.close();
