#!/usr/bin/env node
// Two builds' chat turns, outside the model, in one process and under the same load:
// each build runs on its own 100k-chunk database (made by turn-cost.mjs with that
// build) and the turns alternate between them, question by question, so a busy
// machine slows both alike. For a change whose effect is smaller than the machine's
// noise between two separate runs.
//
//   node bench/turn/turn-cost-ab.mjs --a <root of build A> --b <root of build B> [--chunks 100000] [--turns 200]
//
// A root is a checkout (or a copy) with dist/ built and bench/out/turn/turn-<chunks>.db.

import fs from 'node:fs';
import path from 'node:path';
import { arg, mtragQuestions, searchEnv, turnModules } from './common.mjs';

const option = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? path.resolve(process.argv[i + 1]) : undefined;
};
const roots = { A: option('a'), B: option('b') };
const chunks = arg('chunks', 100_000);
const turns = arg('turns', 200);
if (!roots.A || !roots.B) {
  console.error('usage: node bench/turn/turn-cost-ab.mjs --a <root> --b <root> [--chunks N] [--turns N]');
  process.exit(2);
}

async function setUp(root) {
  const dbPath = path.join(root, `bench/out/turn/turn-${chunks}.db`);
  if (!fs.existsSync(dbPath)) {
    console.error(`${dbPath} not found; build it with that build's bench/turn/turn-cost.mjs --chunks ${chunks}`);
    process.exit(2);
  }
  const { openDatabase, resolveConfig, createEmbedder, Retriever, createRewriter, runTurn, createSession, accelerate } = await turnModules(root);
  const { config } = resolveConfig({ env: { HOME: path.dirname(dbPath), RAGLINE_PROVIDER: 'offline', ...searchEnv() }, flags: { db: dbPath } });
  const db = openDatabase(dbPath);
  const copies = accelerate(db, config.search);
  copies.warmVectors();
  copies.warmKeywords();
  const retriever = new Retriever(db, await createEmbedder(config), config.search, copies.retrieverOptions);
  const context = { db, config, retriever, rewriter: createRewriter(undefined), sessionId: createSession(db).id };
  return { db, context, runTurn, createSession, outside: [], answer: [] };
}

const builds = { A: await setUp(roots.A), B: await setUp(roots.B) };
const questions = mtragQuestions();
for (let i = 0; i < turns + 10; i++) {
  for (const name of i % 2 === 0 ? ['A', 'B'] : ['B', 'A']) {
    const build = builds[name];
    if (i % 8 === 0) build.context.sessionId = build.createSession(build.db).id; // conversations of 8 turns
    let done;
    for await (const event of build.runTurn(build.context, questions[i % questions.length])) if (event.type === 'done') done = event;
    if (i < 10) continue; // warm-up
    build.outside.push(done.timings.totalMs - done.timings.answerMs);
    build.answer.push(done.timings.answerMs);
  }
}
const pct = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))].toFixed(2);
console.log(`${turns} turns each, alternating; ${chunks} chunks\n`);
console.log('| build | turn outside the model p50 ms | p95 ms | extractive answer p50 ms | p95 ms |');
console.log('|---|---|---|---|---|');
for (const [name, build] of Object.entries(builds)) {
  console.log(`| ${name}: ${roots[name]} | ${pct(build.outside, 0.5)} | ${pct(build.outside, 0.95)} | ${pct(build.answer, 0.5)} | ${pct(build.answer, 0.95)} |`);
  build.db.close();
}
