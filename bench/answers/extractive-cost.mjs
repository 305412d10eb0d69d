#!/usr/bin/env node
// The offline answerer's own cost: the questions of questions.json are
// searched once on the index run.mjs builds, then the answerer runs on each
// question's retrieved chunks, 20 rounds; p50 and p95 per answer in ms. The
// answerer is a build's passageAnswer (with the index's word shares, as a turn
// calls it), or its extractiveAnswer in a build from before passages.
//
//   node bench/answers/run.mjs && node bench/answers/extractive-cost.mjs [--compare DIR] [--db FILE] [--k N]
//
// --compare DIR also times another build's answerer (e.g. of the commit before),
// interleaved with this one's so that both see the same load. --k sets how many
// chunks are retrieved per question (the configured k by default).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { option } from '../turn/common.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const dist = path.join(root, 'dist');
const other = option('compare', undefined);
const dbPath = path.resolve(option('db', path.join(root, 'bench/out/answers/realdocs.db')));
if (!fs.existsSync(dbPath)) {
  console.log(`${dbPath} not found; build it with: node bench/answers/run.mjs`);
  process.exit(0);
}
const lib = (p) => import(path.join(dist, p));
const { openDatabase } = await lib('store/db.js');
const { resolveConfig } = await lib('config/index.js');
const { createEmbedder } = await lib('providers/index.js');
const { Retriever } = await lib('retrieve/search.js');
const { termShares } = await lib('retrieve/term-stats.js');

/** A build's offline answerer, called as a turn calls it. */
async function answererOf(folder) {
  try {
    const { passageAnswer } = await import(path.join(folder, 'chat/passage.js'));
    return (question, chunks) => passageAnswer(question, chunks, question, [], [], termShares(db));
  } catch {
    const { extractiveAnswer } = await import(path.join(folder, 'chat/extractive.js'));
    return (question, chunks) => extractiveAnswer(question, chunks, question);
  }
}

const { config } = resolveConfig({ env: { HOME: path.dirname(dbPath), RAGLINE_PROVIDER: 'offline' }, flags: { db: dbPath } });
const db = openDatabase(dbPath);
const retriever = new Retriever(db, await createEmbedder(config));
const set = JSON.parse(fs.readFileSync(path.join(here, 'questions.json'), 'utf8'));
const cases = [];
const k = Number(option('k', config.retrieval?.k ?? 5));
for (const q of set.questions) cases.push({ question: q.question, chunks: await retriever.search(q.question, { k }) });
const answerers = [['this build', await answererOf(dist)]];
if (other) answerers.push([other, await answererOf(path.resolve(other))]);
const times = answerers.map(() => []);
for (let round = 0; round < 20; round++) {
  for (const c of cases) {
    answerers.forEach(([, answer], i) => {
      const start = performance.now();
      answer(c.question, c.chunks);
      if (round > 0) times[i].push(performance.now() - start);
    });
  }
}
answerers.forEach(([name], i) => {
  const sorted = times[i].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(2);
  console.log(`${name}: offline answer (${cases.length} questions, k=${k}, x 19 timed rounds): p50 ${at(0.5)} ms, p95 ${at(0.95)} ms`);
});
db.close();
