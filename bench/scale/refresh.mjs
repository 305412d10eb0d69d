// What keeping the in-memory copy in step costs, on a copy of a scale database:
// the per-search check when nothing changed, a write to another table on the same
// connection (what a chat turn does), and another connection adding and deleting
// vectors (an ingest running beside a chat).
//   node bench/scale/refresh.mjs bench/out/scale/100k.db
import fs from 'node:fs';
import { openDatabase } from '../out/scale/lib/store/db.js';
import { VectorIndex } from '../out/scale/lib/retrieve/memory/vector-index.js';
import { rng, randomUnit } from './gen.mjs';

const source = process.argv[2];
const file = `${source}.refresh-copy`;
fs.copyFileSync(source, file);
const db = openDatabase(file);
const writer = openDatabase(file);
const dim = Number(/float\[(\d+)\]/.exec(db.prepare("SELECT sql FROM sqlite_master WHERE name='vec_chunks'").get().sql)[1]);
const index = new VectorIndex(db, dim);
const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
/** Median time of index.refresh() after `write(i)` (the write itself is not timed). */
const time = (write, reps = 20) => {
  const xs = [];
  for (let i = 0; i < reps; i++) {
    write(i);
    const t = performance.now();
    index.refresh();
    xs.push(performance.now() - t);
  }
  return +median(xs).toFixed(3);
};
const result = { db: source };
let t = performance.now();
index.refresh();
result.fullLoadMs = +(performance.now() - t).toFixed(0);
result.unchangedCheckMs = time(() => {}, 200);
db.exec("CREATE TABLE IF NOT EXISTS bench_scratch (x)");
result.ownUnrelatedWriteMs = time(() => {
  db.prepare('INSERT INTO bench_scratch VALUES (1)').run();
});
const next = rng(3);
const insert = writer.prepare('INSERT INTO vec_chunks (rowid, embedding) VALUES (?, ?)');
let id = 10_000_000;
const added = [];
result.otherInserts100Ms = time(() => {
  writer.transaction(() => {
    for (let i = 0; i < 100; i++) {
      const v = randomUnit(next, dim);
      insert.run(BigInt(++id), Buffer.from(v.buffer));
      added.push(id);
    }
  })();
});
const del = writer.prepare('DELETE FROM vec_chunks WHERE rowid = ?');
result.otherDeletes100Ms = time((i) => {
  writer.transaction(() => {
    for (let j = 0; j < 100; j++) del.run(BigInt(i * 1000 + j + 1));
  })();
}, 10);
console.log(JSON.stringify(result));
index.close();
db.close();
writer.close();
for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
