#!/usr/bin/env node
// The offline rewriter's own cost per follow-up, apart from the rest of the turn:
// every MTRAG task with history (bench/out/mtrag/<domain>/tasks.jsonl, written by
// bench/mtrag/prepare.mjs) rewritten with its earlier turns as history, several
// passes; p50 and p95 of one rewriteSync call. Run it against two builds back to back
// to compare them (`--root <other checkout>`).
//
//   node bench/turn/rewrite-cost.mjs [--passes 20] [--root .]

import fs from 'node:fs';
import path from 'node:path';
import { arg, root as here } from './common.mjs';

const rootAt = process.argv.indexOf('--root');
const root = rootAt > 0 ? path.resolve(process.argv[rootAt + 1]) : here;
const passes = arg('passes', 20);
const { OfflineRewriter } = await import(path.join(root, 'dist/rewrite/offline.js'));

const tasks = [];
for (const domain of ['cloud', 'fiqa']) {
  const file = path.join(here, `bench/out/mtrag/${domain}/tasks.jsonl`);
  if (!fs.existsSync(file)) continue;
  for (const line of fs.readFileSync(file, 'utf8').trim().split('\n')) {
    const task = JSON.parse(line);
    if (task.history.length > 0) tasks.push(task);
  }
}
if (tasks.length === 0) {
  console.log('skipped: no MTRAG tasks (run node bench/mtrag/run.mjs --skip-eval first)');
  process.exit(0);
}
const rewriter = new OfflineRewriter();
const requests = tasks.map((task) => ({
  question: task.question,
  history: task.history.slice(-3).map((turn) => ({ question: turn.user, standaloneQuery: turn.user, answer: turn.assistant })),
  topics: [],
  policy: 'auto',
  termShare: () => 0.001,
}));
const times = [];
for (let pass = 0; pass < passes; pass++) {
  for (const request of requests) {
    const started = process.hrtime.bigint();
    rewriter.rewriteSync(request);
    if (pass > 0) times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
}
times.sort((a, b) => a - b);
const at = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
console.log(`${root}: ${requests.length} follow-ups x ${passes - 1} passes; rewriteSync p50 ${at(0.5).toFixed(3)} ms, p95 ${at(0.95).toFixed(3)} ms, mean ${(times.reduce((a, b) => a + b, 0) / times.length).toFixed(3)} ms`);
