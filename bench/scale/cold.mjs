// One-shot searches: each in a fresh process (what `ragline search` does), timing
// the open of the database and the first vector search as a retriever runs it (ragline's
// policy: the first search answers from vec0 and only schedules the in-memory load).
// Process start and imports are excluded.
//   node bench/scale/cold.mjs bench/out/scale/100k.db [runs=20]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

if (process.argv[2] === '--child') {
  const { openDatabase } = await import('../out/scale/lib/store/db.js');
  const { SearchAccelerators } = await import('../out/scale/lib/retrieve/memory/accelerators.js');
  const { Vec0Search } = await import('../out/scale/lib/retrieve/vec0.js');
  const { DEFAULT_SEARCH_PATHS } = await import('../out/scale/lib/config/index.js');
  const { rng, randomUnit } = await import('./gen.mjs');
  const [file, seed] = process.argv.slice(3);
  const t0 = performance.now();
  const db = openDatabase(file);
  const dim = Number(/float\[(\d+)\]/.exec(db.prepare("SELECT sql FROM sqlite_master WHERE name='vec_chunks'").get().sql)[1]);
  const query = randomUnit(rng(Number(seed)), dim);
  const t1 = performance.now();
  new SearchAccelerators(db).vectorSearch(DEFAULT_SEARCH_PATHS, new Vec0Search(db)).begin(query, 50)();
  const t2 = performance.now();
  console.log(JSON.stringify({ openMs: t1 - t0, searchMs: t2 - t1 }));
} else {
  const [file, runsArg = '20'] = process.argv.slice(2);
  const runs = [];
  for (let i = 0; i < Number(runsArg); i++) {
    const out = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', file, String(1000 + i)], { encoding: 'utf8' });
    if (out.status !== 0) throw new Error(out.stderr);
    runs.push(JSON.parse(out.stdout));
  }
  const pct = (xs, p) => xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
  const s = runs.map((r) => r.searchMs), o = runs.map((r) => r.openMs);
  console.log(JSON.stringify({ db: file, runs: runs.length, openP50: +pct(o, 0.5).toFixed(1), searchP50: +pct(s, 0.5).toFixed(1), searchP95: +pct(s, 0.95).toFixed(1) }));
}
