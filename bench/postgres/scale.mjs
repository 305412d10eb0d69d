#!/usr/bin/env node
// Ingest throughput and the turn outside the model on both stores, same machine,
// same run: a folder of generated text documents (unique chunks made of MTRAG
// passages' sentences, shuffled) is ingested into an SQLite file and into Postgres
// (PGlite unless RAGLINE_BENCH_PG names a server); then offline turns (history,
// rewrite, retrieval, extractive answer, the turn stored) are timed on each.
//
//   node bench/postgres/scale.mjs [--chunks 100000] [--turns 60]

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateFolder, startPostgres } from './common.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const chunks = Number(arg('chunks', '100000'));
const turns = Number(arg('turns', '60'));
const out = path.join(root, 'bench/out/postgres');
const app = await import(path.join(root, 'dist/app/index.js'));
const settings = { provider: 'offline' };

const questions = [
  'How do I create a service ID?',
  'What is the maximum size of a bucket?',
  'How can I rotate an API key?',
  'Which regions support encryption with my own keys?',
  'does it cost anything?',
  'How do I delete a cluster?',
  'What happens when the quota is exceeded?',
  'and how do I change it?',
];

async function turnTimes(db) {
  const workspace = app.openWorkspace({ db, settings });
  try {
    const chat = await app.Chat.open(workspace);
    await chat.prepare();
    const times = [];
    for (let i = 0; i < turns; i++) {
      const started = performance.now();
      for await (const event of chat.ask(questions[i % questions.length])) if (event.type === 'done' && event.status !== 'answered') throw new Error(`turn ${event.status}`);
      times.push(performance.now() - started);
    }
    return times.slice(3).sort((a, b) => a - b); // the first turns load the providers
  } finally {
    await workspace.close();
  }
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];

async function run(db) {
  const workspace = app.openWorkspace({ db, settings });
  let summary;
  const started = performance.now();
  try {
    summary = await app.ingestFolder(workspace, folder);
  } finally {
    await workspace.close();
  }
  const seconds = (performance.now() - started) / 1000;
  const times = await turnTimes(db);
  return { chunks: summary.chunks.written, seconds, perSecond: summary.chunks.written / seconds, p50: quantile(times, 0.5), p95: quantile(times, 0.95) };
}

const folder = path.join(out, `scale-${chunks}`);
generateFolder(folder, Math.ceil(chunks / 10), 1);
const file = path.join(out, `scale-${chunks}.db`);
for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
const sqlite = await run(file);
console.error('sqlite done', sqlite);
const pg = await startPostgres();
let postgres;
try {
  postgres = await run(pg.url);
} finally {
  await pg.close();
}
console.log(`| store | chunks | ingest s | chunks/s | turn p50 ms | turn p95 ms |`);
console.log('|---|---|---|---|---|---|');
for (const [name, r] of [['SQLite', sqlite], [`Postgres (${pg.kind})`, postgres]]) {
  console.log(`| ${name} | ${r.chunks} | ${r.seconds.toFixed(1)} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} |`);
}
fs.writeFileSync(path.join(out, `scale-${chunks}.json`), JSON.stringify({ date: new Date().toISOString(), sqlite, postgres, server: pg.kind }, null, 2));
