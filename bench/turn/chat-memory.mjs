#!/usr/bin/env node
// What a chat process holds and how soon its searches are fast, on the turn database
// (turn-cost.mjs builds it): the in-memory copies load in the background as a chat
// loads them (SearchAccelerators.warmInBackground: the keyword copy on a worker
// thread), then chat turns run through the real runTurn. Reports when each copy was
// ready, the turn outside the model (p50/p95), and the process's RSS read from
// /proc/self/status (VmRSS now, VmHWM the peak), which a busy machine does not distort.
//
//   node bench/turn/chat-memory.mjs [--root <build root>] [--chunks 100000] [--turns 100]
//   SMAPS=1 also prints, after the turns, the resident memory by mapping (the database's pages, the heap).
//
// --root picks the build (a checkout with dist/ built; default this one); the
// database is always this checkout's bench/out/turn/turn-<chunks>.db, so two builds
// are compared on the same file. Run each build in its own process, one after the other.

import fs from 'node:fs';
import path from 'node:path';
import { arg, existingTurnDb, mtragQuestions, option, root, searchEnv, turnModules } from './common.mjs';

const buildRoot = path.resolve(option('root', root));
const chunks = arg('chunks', 100_000);
const turns = arg('turns', 100);
const dbPath = existingTurnDb(chunks);

const status = () => {
  const text = fs.readFileSync('/proc/self/status', 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024, anon: kb('RssAnon') / 1024, file: kb('RssFile') / 1024, shmem: kb('RssShmem') / 1024 };
};
const mb = (value) => value.toFixed(0);
/** SMAPS=1: the process's resident memory by what is mapped (a file's path, or [anon]), largest first. */
function residentByMapping() {
  const byMapping = new Map();
  let mapping = '';
  for (const line of fs.readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) mapping = header[1] || '[anon]';
    else if (line.startsWith('Rss:')) byMapping.set(mapping, (byMapping.get(mapping) ?? 0) + Number(line.split(/\s+/)[1]));
  }
  return [...byMapping].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([name, kb]) => `${mb(kb / 1024)} MB ${name}`);
}

const started = performance.now();
const { openDatabase, resolveConfig, createEmbedder, Retriever, createRewriter, runTurn, createSession } = await turnModules(buildRoot);
const { SearchAccelerators } = await import(path.join(buildRoot, 'dist/retrieve/memory/accelerators.js'));
const { config } = resolveConfig({ env: { HOME: path.dirname(dbPath), RAGLINE_PROVIDER: 'offline', ...searchEnv() }, flags: { db: dbPath } });
const db = openDatabase(dbPath);
const accelerators = new SearchAccelerators(db);
const readyAt = {};
// A chat's prompt keeps its process alive while the copies load (their timers and workers are unref'd).
const keepAlive = setInterval(() => {}, 1000);
const vectorsReady = accelerators.vectors.warmInBackground(config.search).then(() => (readyAt.vectors = performance.now() - started));
const keywordsReady = accelerators.keywords.warmInBackground(config.search.keyword).then(() => (readyAt.keywords = performance.now() - started));
await Promise.all([vectorsReady, keywordsReady]);
await new Promise((resolve) => setTimeout(resolve, 500)); // a worker that built a copy has exited
const loaded = status();

const context = {
  db,
  config,
  retriever: new Retriever(db, await createEmbedder(config), config.search, { accelerators }),
  rewriter: createRewriter(undefined),
  sessionId: createSession(db).id,
};
const questions = mtragQuestions();
const outside = [];
for (let i = 0; i < turns + 10; i++) {
  if (i % 8 === 0) context.sessionId = createSession(db).id; // conversations of 8 turns
  let done;
  for await (const event of runTurn(context, questions[i % questions.length])) if (event.type === 'done') done = event;
  if (i >= 10) outside.push(done.timings.totalMs - done.timings.answerMs);
}
const pct = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))].toFixed(2);
const after = status();
if (process.env.SMAPS) console.error(residentByMapping().join('\n'));
const vectorIndex = accelerators.vectors.index;
const keywordIndex = accelerators.keywords.index;
console.log(`\n${buildRoot}: ${chunks} chunks, ${turns} turns`);
console.log('| vectors ready s | keywords ready s | vector copy MB | keyword copy MB | RSS loaded MB | RSS after turns MB (anon + file + shmem) | peak RSS (VmHWM) MB | turn p50 ms | p95 ms |');
console.log('|---|---|---|---|---|---|---|---|---|');
console.log(
  `| ${(readyAt.vectors / 1000).toFixed(2)} | ${(readyAt.keywords / 1000).toFixed(2)} | ${mb((vectorIndex?.memoryBytes ?? 0) / 1048576)} | ${mb((keywordIndex?.memoryBytes ?? 0) / 1048576)} | ${mb(loaded.rss)} | ${mb(after.rss)} (${mb(after.anon)} + ${mb(after.file)} + ${mb(after.shmem)}) | ${mb(after.hwm)} | ${pct(outside, 0.5)} | ${pct(outside, 0.95)} |`,
);
clearInterval(keepAlive);
accelerators.close();
db.close();
