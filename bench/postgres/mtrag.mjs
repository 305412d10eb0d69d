#!/usr/bin/env node
// MTRAG Cloud and FiQA on both stores, same embedder (offline), same settings:
// each domain's passages are ingested into an SQLite file and into Postgres
// (PGlite unless RAGLINE_BENCH_PG names a server), then every task's reference
// rewrite is searched on each (k = 10, the chunks' documents in rank order, as
// `ragline eval` scores them) and R@5, R@10 and MRR@10 are compared. Ingest times
// are reported beside. Needs a build (npx tsc) and ../shared/bench.
//
//   node bench/postgres/mtrag.mjs [--domains cloud,fiqa] [--passages 3000]
//
// --passages N: a corpus of every passage some task needs plus the first others up
// to N, the same on both stores (a comparison of the stores, not the published
// figure, which is over the whole corpus).

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPostgres } from './common.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const domains = arg('domains', 'cloud,fiqa').split(',');
const passages = arg('passages', undefined);
const mtrag = path.join(root, 'bench/out/mtrag');
const out = path.join(root, 'bench/out/postgres');
fs.mkdirSync(out, { recursive: true });
if (!fs.existsSync(path.join(mtrag, 'cloud/tasks.jsonl'))) {
  const prep = spawnSync(process.execPath, [path.join(root, 'bench/mtrag/prepare.mjs')], { stdio: 'inherit' });
  if (prep.status !== 0) process.exit(prep.status ?? 1);
}

const app = await import(path.join(root, 'dist/app/index.js'));
const { documentRanks } = await import(path.join(root, 'dist/eval/run.js'));
const { scoreQuery, meanMetrics } = await import(path.join(root, 'dist/eval/metrics.js'));
const settings = { provider: 'offline' };

/** The domain's folder of passages: all of them, or a subset (--passages). */
function corpus(domain, tasks) {
  const all = path.join(mtrag, domain, 'docs');
  if (!passages) return all;
  const folder = path.join(out, `${domain}-${passages}`);
  fs.rmSync(folder, { recursive: true, force: true });
  fs.mkdirSync(folder, { recursive: true });
  const needed = new Set(tasks.flatMap((task) => task.relevant.map((id) => `${id}.txt`)));
  const names = fs.readdirSync(all).sort();
  const chosen = new Set(names.filter((name) => needed.has(name)));
  for (const name of names) {
    if (chosen.size >= Number(passages)) break;
    chosen.add(name);
  }
  for (const name of chosen) fs.copyFileSync(path.join(all, name), path.join(folder, name));
  return folder;
}

async function measure(db, folder, tasks) {
  const workspace = app.openWorkspace({ db, settings });
  try {
    const started = performance.now();
    const summary = await app.ingestFolder(workspace, folder, { onProgress: (p) => process.stderr.write(`\r${p.filesDone}/${p.filesTotal} files`) });
    process.stderr.write('\n');
    const ingestSeconds = (performance.now() - started) / 1000;
    const perQuery = [];
    const searchMs = [];
    for (const task of tasks) {
      const t0 = performance.now();
      const found = await app.search(workspace, task.reference_rewrite ?? task.question, { k: 10 });
      searchMs.push(performance.now() - t0);
      const ranked = documentRanks(found.results).map((name) => (name ?? '').replace(/\.txt$/, ''));
      perQuery.push(scoreQuery(ranked, task.relevant));
    }
    searchMs.sort((a, b) => a - b);
    return { chunks: summary.chunks.written, ingestSeconds, metrics: meanMetrics(perQuery), searchP50: searchMs[Math.floor(searchMs.length / 2)], searchP95: searchMs[Math.floor(searchMs.length * 0.95)] };
  } finally {
    await workspace.close();
  }
}

const rows = [];
for (const domain of domains) {
  const tasks = fs.readFileSync(path.join(mtrag, domain, 'tasks.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  const file = path.join(out, `${domain}.db`);
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
  const folder = corpus(domain, tasks);
  const sqlite = await measure(file, folder, tasks);
  console.error(`${domain}: SQLite done`);
  const pg = await startPostgres();
  let postgres;
  try {
    postgres = await measure(pg.url, folder, tasks);
  } finally {
    await pg.close();
  }
  rows.push({ domain, passages: fs.readdirSync(folder).length, tasks: tasks.length, sqlite, postgres, server: pg.kind });
  console.error(`${domain}: done`);
}

const f = (x) => x.toFixed(4);
console.log('| domain | store | chunks | ingest s | R@5 | R@10 | MRR@10 | search p50 ms | p95 ms |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  for (const [name, r] of [['SQLite', row.sqlite], [`Postgres (${row.server})`, row.postgres]]) {
    console.log(`| ${row.domain} (${row.passages} passages, ${row.tasks} tasks) | ${name} | ${r.chunks} | ${r.ingestSeconds.toFixed(1)} | ${f(r.metrics.recall5)} | ${f(r.metrics.recall10)} | ${f(r.metrics.mrr10)} | ${r.searchP50.toFixed(1)} | ${r.searchP95.toFixed(1)} |`);
  }
  console.log(`| ${row.domain} | difference | | | ${f(row.postgres.metrics.recall5 - row.sqlite.metrics.recall5)} | ${f(row.postgres.metrics.recall10 - row.sqlite.metrics.recall10)} | ${f(row.postgres.metrics.mrr10 - row.sqlite.metrics.mrr10)} | | |`);
}
fs.writeFileSync(path.join(out, 'mtrag.json'), JSON.stringify({ date: new Date().toISOString(), rows }, null, 2));
