// Builds a ragline database for the scale benchmark by direct inserts (not through
// ingest): documents of 1000 chunks each, chunks with a short text, and one vec0 row
// per chunk. No FTS rows (this benchmark is about the vector side).
//   node bench/scale/gen.mjs 100000            random unit vectors, 384-d, seed 1
//   node bench/scale/gen.mjs 1000000
//   node bench/scale/gen.mjs real              offline-embedder vectors of the ~28k
//                                              benchmark passages (read in place)
//   CHUNK_SIZE=8192 node bench/scale/gen.mjs 100000   vec0 chunk_size option (default 1024)
// Output: bench/out/scale/<name>.db (gitignored). Prints the path and timings.
import fs from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../out/scale/lib/store/db.js';
import { createVectorTable } from '../out/scale/lib/store/vectors.js';

const arg = process.argv[2] ?? '100000';
const DIM = Number(process.env.DIM ?? 384);
const OUT = path.resolve(process.env.SCALE_OUT ?? 'bench/out/scale');
const BENCH = process.env.BENCH_DIR ?? '/work/shared/bench';

/** mulberry32: small seeded PRNG. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Unit vector with Gaussian components (Box-Muller). */
export function randomUnit(next, dim, out = new Float32Array(dim)) {
  let norm = 0;
  for (let i = 0; i < dim; i += 2) {
    const r = Math.sqrt(-2 * Math.log(next() + 1e-12));
    const t = 2 * Math.PI * next();
    out[i] = r * Math.cos(t);
    if (i + 1 < dim) out[i + 1] = r * Math.sin(t);
  }
  for (let i = 0; i < dim; i++) norm += out[i] * out[i];
  norm = 1 / Math.sqrt(norm);
  for (let i = 0; i < dim; i++) out[i] *= norm;
  return out;
}

function* realVectors() {
  const { OfflineEmbedder } = await_import_embedder;
  const embedder = new OfflineEmbedder({ dimensions: DIM });
  for (const domain of ['cloud', 'fiqa']) {
    for (const line of fs.readFileSync(path.join(BENCH, `corpus_${domain}.jsonl`), 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const text = JSON.parse(line).text ?? '';
      if (!text.trim()) continue;
      yield { text: text.slice(0, 80), vector: embedder.embedOne(text) };
    }
  }
}

let await_import_embedder;
if (arg === 'real') await_import_embedder = await import('../out/scale/lib/providers/offline-embedder.js');

if (import.meta.url === `file://${process.argv[1]}`) {
  const chunkSize = process.env.CHUNK_SIZE;
  const name = (arg === 'real' ? 'real' : `${Math.round(Number(arg) / 1000)}k`) + (chunkSize ? `-cs${chunkSize}` : '');
  fs.mkdirSync(OUT, { recursive: true });
  const file = path.join(OUT, `${name}.db`);
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
  const started = performance.now();
  const db = openDatabase(file, { create: true });
  if (chunkSize) {
    db.exec(`CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[${DIM}] distance_metric=cosine, chunk_size=${Number(chunkSize)})`);
  } else createVectorTable(db, DIM);
  const insertDoc = db.prepare(
    "INSERT INTO documents (root, path, kind, content_hash, size, mtime_ms, chunk_count, ingested_at) VALUES ('/bench', ?, 'text', 'x', 0, 0, 1000, '')",
  );
  const insertChunk = db.prepare(
    "INSERT INTO chunks (document_id, ordinal, text, start_line, end_line, text_hash) VALUES (?, ?, ?, 1, 1, 'x')",
  );
  const insertVec = db.prepare('INSERT INTO vec_chunks (rowid, embedding) VALUES (?, ?)');
  const source =
    arg === 'real'
      ? realVectors()
      : (function* () {
          const next = rng(1);
          const v = new Float32Array(DIM);
          for (let i = 0; i < Number(arg); i++) yield { text: `chunk ${i}`, vector: randomUnit(next, DIM, v) };
        })();
  let count = 0;
  let documentId = 0;
  const batch = db.transaction((items) => {
    for (const item of items) {
      if (count % 1000 === 0) documentId = Number(insertDoc.run(`doc-${count / 1000}.txt`).lastInsertRowid);
      const id = insertChunk.run(documentId, count % 1000, item.text).lastInsertRowid;
      insertVec.run(BigInt(id), Buffer.from(item.vector.buffer, item.vector.byteOffset, item.vector.byteLength));
      count++;
    }
  });
  let items = [];
  for (const item of source) {
    items.push({ text: item.text, vector: Float32Array.from(item.vector) });
    if (items.length === 10000) {
      batch(items);
      items = [];
    }
  }
  if (items.length) batch(items);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const mb = fs.statSync(file).size / 1e6;
  console.log(JSON.stringify({ file, vectors: count, dimensions: DIM, seconds: +((performance.now() - started) / 1000).toFixed(1), mb: +mb.toFixed(0) }));
}
