#!/usr/bin/env node
// The cost of a chat turn outside the model calls, at 100k chunks: history,
// gate and rewrite (offline), query embedding (offline), hybrid retrieval and
// persisting, through the real runTurn. The offline extractive answer stands in
// for the model and its time is reported apart and left out.
//
//   node bench/turn/turn-cost.mjs [--chunks 100000] [--turns 200]
//
// Builds bench/out/turn/corpus (copies of the MTRAG passages from ../shared/bench,
// each made distinct, until the chunk count is reached) and ingests it with the
// real CLI once; later runs reuse the database.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { arg, mtragQuestions, root, searchEnv, shared, turnDbPath, turnModules } from './common.mjs';

const targetChunks = arg('chunks', 100_000);
const turns = arg('turns', 200);
const out = path.join(root, 'bench/out/turn');
const corpus = path.join(out, `corpus-${targetChunks}`);
const dbPath = turnDbPath(targetChunks);

if (!fs.existsSync(dbPath)) {
  if (!fs.existsSync(shared)) {
    console.error(`error: ../shared/bench not found at ${shared}`);
    process.exit(2);
  }
  fs.rmSync(corpus, { recursive: true, force: true });
  fs.mkdirSync(corpus, { recursive: true });
  const passages = [];
  for (const domain of ['cloud', 'fiqa']) {
    for (const line of fs.readFileSync(path.join(shared, `corpus_${domain}.jsonl`), 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const { id, text } = JSON.parse(line);
      if (text.trim()) passages.push({ id, text });
    }
  }
  // Passages are under the default chunk size, so one file is one chunk.
  for (let i = 0; i < targetChunks; i++) {
    const p = passages[i % passages.length];
    const copy = Math.floor(i / passages.length);
    const dir = path.join(corpus, String(copy));
    if (i % passages.length === 0) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${p.id}.txt`), copy === 0 ? p.text : `${p.text}\n(copy ${copy})`);
  }
  const started = performance.now();
  const result = spawnSync(process.execPath, [path.join(root, 'bin/ragline.js'), '--db', dbPath, 'ingest', corpus, '--json'], {
    env: { ...process.env, RAGLINE_PROVIDER: 'offline' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    process.stderr.write(result.stderr);
    process.exit(1);
  }
  console.error(`built ${dbPath}: ${JSON.parse(result.stdout).chunks.written} chunks in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

const { openDatabase, resolveConfig, createEmbedder, Retriever, createRewriter, runTurn, createSession, accelerate } = await turnModules();

const { config } = resolveConfig({ env: { HOME: out, RAGLINE_PROVIDER: 'offline', ...searchEnv() }, flags: { db: dbPath } });
const db = openDatabase(dbPath);
const chunkCount = db.prepare('SELECT count(*) AS n FROM chunks').get().n;
const questions = mtragQuestions();
// A chat loads both in-memory copies in the background when it starts; here they are
// loaded before the timed turns (RAGLINE_KEYWORD_SEARCH=fts5 keeps the keyword side on FTS5).
const copies = accelerate(db, config.search);
let started = performance.now();
copies.warmVectors();
const vectorLoadMs = performance.now() - started;
started = performance.now();
copies.warmKeywords();
const keywordLoadMs = performance.now() - started;
const keywordIndex = copies.keywordIndex();

const context = {
  db,
  config,
  retriever: new Retriever(db, await createEmbedder(config), config.search, copies.retrieverOptions),
  rewriter: createRewriter(undefined),
  sessionId: createSession(db).id,
};
const outside = [];
const parts = { historyMs: [], rewriteMs: [], retrieveMs: [], persistMs: [], answerMs: [] };
for (let i = 0; i < turns + 10; i++) {
  if (i % 8 === 0) context.sessionId = createSession(db).id; // conversations of 8 turns
  let done;
  for await (const event of runTurn(context, questions[i % questions.length])) if (event.type === 'done') done = event;
  if (i < 10) continue; // warm-up
  const t = done.timings;
  outside.push(t.totalMs - t.answerMs);
  for (const key of Object.keys(parts)) parts[key].push(t[key]);
}
const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};
const row = (name, values) => `| ${name} | ${pct(values, 0.5).toFixed(2)} | ${pct(values, 0.95).toFixed(2)} |`;
console.log(`\n${chunkCount} chunks, ${turns} turns (offline rewriter and embedder), conversations of 8 turns\n`);
console.log('| stage | p50 ms | p95 ms |');
console.log('|---|---|---|');
console.log(row('turn outside the model (total - answer)', outside));
for (const [key, values] of Object.entries(parts)) console.log(row(key, values));
console.log(`\nRSS ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`);
console.log(`loaded before the turns: vector copy ${vectorLoadMs.toFixed(0)} ms; keyword copy ${keywordIndex?.ready ? `${keywordLoadMs.toFixed(0)} ms, ${(keywordIndex.memoryBytes / 1e6).toFixed(0)} MB` : 'not used (FTS5)'}`);
db.close();
