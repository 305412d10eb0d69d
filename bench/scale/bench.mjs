// One strategy on one database, in a fresh process: load cost, p50/p95 over the
// queries, recall@10 against exact KNN (sqlite-vec vec0), RSS.
//   node bench/scale/bench.mjs <db> <strategy> [queries=200] [n=50]
// strategies:
//   vec0         sqlite-vec exact KNN, mmap_size 4 GiB (ragline's pragmas)
//   vec0-nommap  the same with PRAGMA mmap_size = 0
//   memory       ragline's VectorIndex: vec0 copied into WebAssembly memory, SIMD scan (exact), 1 thread
//   memory2      the same, scan split with a helper thread (ragline's default on 2+ cores)
//   js           Float32Array loaded by a vec0 table scan, plain JavaScript dot products (exact)
//   bq-<R>       sign bits (binary quantization) scanned by hamming in WebAssembly, top R
//                reranked with float cosine from a Float32Array (approximate)
// Queries: random unit vectors (seed 2) for synthetic databases, the benchmark questions
// embedded with the offline embedder for bench/out/scale/real.db.
import fs from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../out/scale/lib/store/db.js';
import { VectorIndex } from '../out/scale/lib/retrieve/memory/vector-index.js';
import { createKernelMemory, instantiateKernel } from '../out/scale/lib/retrieve/memory/vector-kernel.js';
import { rng, randomUnit } from './gen.mjs';

const [file, strategy = 'memory', queriesArg = '200', nArg = '50'] = process.argv.slice(2);
const QUERIES = Number(queriesArg);
const N = Number(nArg);
const BENCH = process.env.BENCH_DIR ?? '/work/shared/bench';

const db = openDatabase(file);
const dim = Number(/float\[(\d+)\]/.exec(db.prepare("SELECT sql FROM sqlite_master WHERE name='vec_chunks'").get().sql)[1]);
const count = db.prepare('SELECT count(*) AS n FROM chunks').get().n;

async function queries() {
  if (path.basename(file).startsWith('real')) {
    const { OfflineEmbedder } = await import('../out/scale/lib/providers/offline-embedder.js');
    const embedder = new OfflineEmbedder({ dimensions: dim });
    const lines = fs.readFileSync(path.join(BENCH, 'retrieval_tasks.jsonl'), 'utf8').split('\n').filter((l) => l.trim());
    return lines.slice(0, QUERIES).map((l) => embedder.embedOne(JSON.parse(l).question));
  }
  const next = rng(2);
  return Array.from({ length: QUERIES }, () => randomUnit(next, dim));
}
const qs = await queries();
const bytes = (v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

// Exact answers (top 10) from vec0, for recall.
const exactStmt = db.prepare('SELECT rowid AS id, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? ORDER BY distance');
const truthFile = `${file}.truth-${QUERIES}.json`;
let truth;
if (fs.existsSync(truthFile)) truth = JSON.parse(fs.readFileSync(truthFile, 'utf8'));
else {
  truth = qs.map((q) => exactStmt.all(bytes(q), 10).map((r) => r.id));
  fs.writeFileSync(truthFile, JSON.stringify(truth));
}

function loadFloats() {
  const ids = new Float64Array(count);
  const vectors = new Float32Array(count * dim);
  let i = 0;
  for (const [id, blob] of db.prepare('SELECT rowid, embedding FROM vec_chunks').raw().iterate()) {
    ids[i] = id;
    const v = new Float32Array(blob.buffer, blob.byteOffset, dim);
    let norm = 0;
    for (let j = 0; j < dim; j++) norm += v[j] * v[j];
    norm = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    const o = i * dim;
    for (let j = 0; j < dim; j++) vectors[o + j] = v[j] * norm;
    i++;
  }
  return { ids, vectors, size: i };
}

function topByScore(scores, size, n, ids) {
  const top = [];
  let worst = -Infinity;
  for (let i = 0; i < size; i++) {
    const s = scores[i];
    if (top.length === n && s <= worst) continue;
    let j = top.length < n ? top.length : n - 1;
    top[j] = undefined;
    while (j > 0 && top[j - 1].s < s) (top[j] = top[j - 1]), j--;
    top[j] = { s, i };
    if (top.length === n) worst = top[n - 1].s;
  }
  return top.map((t) => ({ id: ids[t.i], distance: 1 - t.s }));
}

const rssBefore = process.memoryUsage().rss;
let search;
const loadStart = performance.now();
if (strategy === 'vec0' || strategy === 'vec0-nommap') {
  if (strategy === 'vec0-nommap') db.pragma('mmap_size = 0');
  search = (q) => exactStmt.all(bytes(q), N);
} else if (strategy === 'memory' || strategy === 'memory2') {
  const index = new VectorIndex(db, dim, { threads: strategy === 'memory' ? 1 : 2 });
  index.refresh();
  search = (q) => index.search(q, N);
} else if (strategy === 'js') {
  const { ids, vectors, size } = loadFloats();
  const scores = new Float32Array(size);
  search = (q) => {
    for (let i = 0; i < size; i++) {
      const o = i * dim;
      let a = 0, b = 0, c = 0, d = 0;
      for (let j = 0; j < dim; j += 4) {
        a += q[j] * vectors[o + j];
        b += q[j + 1] * vectors[o + j + 1];
        c += q[j + 2] * vectors[o + j + 2];
        d += q[j + 3] * vectors[o + j + 3];
      }
      scores[i] = a + b + c + d;
    }
    return topByScore(scores, size, N, ids);
  };
} else if (strategy.startsWith('bq-')) {
  const R = Number(strategy.slice(3));
  const { ids, vectors, size } = loadFloats();
  const codeBytes = Math.ceil(dim / 128) * 16;
  const kernel = instantiateKernel(createKernelMemory(codeBytes + size * codeBytes + size * 4 + 64));
  const u8 = new Uint8Array(kernel.memory.buffer);
  const base = codeBytes, out = codeBytes + size * codeBytes;
  const encode = (v, at) => {
    u8.fill(0, at, at + codeBytes);
    for (let j = 0; j < dim; j++) if (v[j] > 0) u8[at + (j >> 3)] |= 1 << (j & 7);
  };
  for (let i = 0; i < size; i++) encode(vectors.subarray(i * dim, (i + 1) * dim), base + i * codeBytes);
  const hist = new Int32Array(dim + 1);
  const hamming = new Int32Array(kernel.memory.buffer, out, size);
  search = (q) => {
    encode(q, 0);
    kernel.hamming(0, base, size, codeBytes, out);
    // threshold on the hamming histogram, then rerank the R closest by float cosine
    hist.fill(0);
    for (let i = 0; i < size; i++) hist[hamming[i]]++;
    let cut = 0, acc = 0;
    while (cut < dim && acc + hist[cut] < R) acc += hist[cut++];
    const cand = [];
    for (let i = 0; i < size; i++) if (hamming[i] <= cut) cand.push(i);
    const scores = new Float32Array(cand.length);
    for (let c = 0; c < cand.length; c++) {
      const o = cand[c] * dim;
      let s = 0;
      for (let j = 0; j < dim; j++) s += q[j] * vectors[o + j];
      scores[c] = s;
    }
    return topByScore(scores, cand.length, N, Float64Array.from(cand, (i) => ids[i]));
  };
} else throw new Error(`unknown strategy ${strategy}`);
const loadMs = performance.now() - loadStart;

// warm-up queries (the helper thread starts on the first), then the timed ones
for (let i = 0; i < 5; i++) search(qs[i % qs.length]);
const times = [];
let hits = 0;
qs.forEach((q, qi) => {
  const t = performance.now();
  const got = search(q);
  times.push(performance.now() - t);
  const want = new Set(truth[qi]);
  hits += got.slice(0, 10).filter((r) => want.has(r.id)).length;
});
times.sort((a, b) => a - b);
/** Anonymous (the copy, heaps) and file-backed (SQLite's mmap of the database) resident memory, Linux only. */
function rssParts() {
  try {
    const status = fs.readFileSync('/proc/self/status', 'utf8');
    const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
    return { rssAnonMB: Math.round(kb('RssAnon') / 1000), rssFileMB: Math.round(kb('RssFile') / 1000) };
  } catch {
    return {};
  }
}
const pct = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
console.log(
  JSON.stringify({
    db: path.basename(file),
    vectors: count,
    strategy,
    loadMs: +loadMs.toFixed(0),
    p50: +pct(0.5).toFixed(2),
    p95: +pct(0.95).toFixed(2),
    recall10: +(hits / (10 * qs.length)).toFixed(4),
    rssMB: Math.round(process.memoryUsage().rss / 1e6),
    rssDeltaMB: Math.round((process.memoryUsage().rss - rssBefore) / 1e6),
    ...rssParts(),
  }),
);
