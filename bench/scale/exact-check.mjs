// Checks that the in-memory search returns what vec0's exact KNN returns, query by
// query, and that every difference is a tie (equal distance at the cut-off rank).
//   node bench/scale/exact-check.mjs bench/out/scale/real.db [queries=200] [k=10]
import fs from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../out/scale/lib/store/db.js';
import { VectorIndex } from '../out/scale/lib/retrieve/memory/vector-index.js';
import { rng, randomUnit } from './gen.mjs';

const [file, queriesArg = '200', kArg = '10'] = process.argv.slice(2);
const K = Number(kArg);
const db = openDatabase(file);
const dim = Number(/float\[(\d+)\]/.exec(db.prepare("SELECT sql FROM sqlite_master WHERE name='vec_chunks'").get().sql)[1]);
let queries;
if (path.basename(file).startsWith('real')) {
  const { OfflineEmbedder } = await import('../out/scale/lib/providers/offline-embedder.js');
  const embedder = new OfflineEmbedder({ dimensions: dim });
  queries = fs
    .readFileSync(path.join(process.env.BENCH_DIR ?? '/work/shared/bench', 'retrieval_tasks.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, Number(queriesArg))
    .map((l) => embedder.embedOne(JSON.parse(l).question));
} else {
  const next = rng(2);
  queries = Array.from({ length: Number(queriesArg) }, () => randomUnit(next, dim));
}
const exact = db.prepare('SELECT rowid AS id, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? ORDER BY distance');
const index = new VectorIndex(db, dim);
let identical = 0, tiesOnly = 0, wrong = 0, maxDistanceError = 0;
for (const q of queries) {
  const want = exact.all(Buffer.from(q.buffer, q.byteOffset, q.byteLength), K);
  const got = index.search(q, K);
  for (let i = 0; i < want.length; i++) maxDistanceError = Math.max(maxDistanceError, Math.abs(want[i].distance - got[i].distance));
  const wantIds = new Set(want.map((r) => r.id));
  const extra = got.filter((r) => !wantIds.has(r.id));
  if (extra.length === 0) identical++;
  else if (extra.every((r) => Math.abs(r.distance - want[want.length - 1].distance) < 1e-5)) tiesOnly++;
  else wrong++;
}
index.close();
console.log(JSON.stringify({ db: path.basename(file), queries: queries.length, k: K, identical, tiesOnly, wrong, maxDistanceError }));
