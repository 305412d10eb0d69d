#!/usr/bin/env node
// Hybrid search latency at 100k chunks of real text (the database that
// bench/turn/turn-cost.mjs builds from the MTRAG passages):
//   - in a running process (chat, eval): Retriever.search for MTRAG questions
//     after the in-memory vector and keyword copies are loaded, embedding included
//     (RAGLINE_KEYWORD_SEARCH=fts5: keyword side on FTS5);
//   - one-shot: `ragline search --json` in a fresh process, its own `ms` (the
//     search after the database is open, process start excluded), and the whole
//     command's wall time.
//
//   node bench/turn/search-latency.mjs [--chunks 100000] [--queries 150] [--oneshot 15]

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { arg, existingTurnDb, mtragQuestions, root, searchEnv } from './common.mjs';

const chunks = arg('chunks', 100_000);
const queries = arg('queries', 150);
const oneshot = arg('oneshot', 15);
const dbPath = existingTurnDb(chunks);

const { openDatabase } = await import(path.join(root, 'dist/store/db.js'));
const { resolveConfig } = await import(path.join(root, 'dist/config/index.js'));
const { createEmbedder } = await import(path.join(root, 'dist/providers/index.js'));
const { Retriever } = await import(path.join(root, 'dist/retrieve/search.js'));
const { SearchAccelerators } = await import(path.join(root, 'dist/retrieve/memory/accelerators.js'));

const questions = mtragQuestions();
const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};
const row = (name, values) => `| ${name} | ${values.length} | ${pct(values, 0.5).toFixed(1)} | ${pct(values, 0.95).toFixed(1)} |`;

const { config } = resolveConfig({ env: { HOME: path.join(root, 'bench/out/turn'), RAGLINE_PROVIDER: 'offline', ...searchEnv() }, flags: { db: dbPath } });
const db = openDatabase(dbPath);
const accelerators = new SearchAccelerators(db);
const retriever = new Retriever(db, await createEmbedder(config), config.search, { accelerators });
accelerators.warm(config.search); // RAGLINE_KEYWORD_SEARCH=fts5 keeps the keyword side on FTS5
const settings = { k: config.retrieval.k };
for (let i = 0; i < 10; i++) await retriever.search(questions[i], settings); // warm-up
const warm = [];
for (let i = 0; i < queries; i++) {
  const started = performance.now();
  await retriever.search(questions[(i + 10) % questions.length], settings);
  warm.push(performance.now() - started);
}
accelerators.close();
db.close();

const inside = [];
const wall = [];
for (let i = 0; i < oneshot; i++) {
  const started = performance.now();
  const result = spawnSync(process.execPath, [path.join(root, 'bin/ragline.js'), '--db', dbPath, 'search', questions[i], '--json'], {
    env: { ...process.env, RAGLINE_PROVIDER: 'offline' },
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  wall.push(performance.now() - started);
  if (result.status !== 0) {
    process.stderr.write(result.stderr);
    process.exit(1);
  }
  inside.push(JSON.parse(result.stdout).ms);
}

console.log(`\n${chunks} chunks, offline embedder, k = ${settings.k}\n`);
console.log('| search | n | p50 ms | p95 ms |');
console.log('|---|---|---|---|');
console.log(row(`in a running process (vector copy${config.search.keyword === 'fts5' ? ', FTS5' : ' and keyword copy'} loaded)`, warm));
console.log(row('one-shot `ragline search`, its own ms (process start excluded)', inside));
console.log(row('one-shot `ragline search`, whole command', wall));
