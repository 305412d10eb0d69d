#!/usr/bin/env node
// Offline answer quality on the bundled docs: the conversations of
// fixtures/CONVERSATIONS.json through the real runTurn (offline rewriter,
// embedder and extractive answerer): does each answer cite the page that holds
// the answer; and for fixtures/FACTS.json, does the answer quote the fact.
//
//   npx tsc -p . && node bench/turn/fixture-answers.mjs [--verbose]

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root, turnModules } from './common.mjs';

const { openDatabase, resolveConfig, createEmbedder, Retriever, createRewriter, runTurn, createSession, ingest } = await turnModules();

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-fixture-answers-'));
const dbPath = path.join(home, 'fixtures.db');
const { config } = resolveConfig({ env: { HOME: home, RAGLINE_PROVIDER: 'offline' }, flags: { db: dbPath } });
const db = openDatabase(dbPath, { create: true });
const embedder = await createEmbedder(config);
await ingest({ root: path.join(root, 'fixtures/docs'), db, embedder, chunker: config.chunk, maxFileBytes: config.ingest.maxFileBytes });
const verbose = process.argv.includes('--verbose');
const session = () => ({ db, config, retriever: new Retriever(db, embedder), rewriter: createRewriter(undefined), sessionId: createSession(db).id });

const conversations = JSON.parse(fs.readFileSync(path.join(root, 'fixtures/CONVERSATIONS.json'), 'utf8'));
let turns = 0;
let cited = 0;
let top1 = 0;
for (const conversation of conversations.conversations ?? conversations) {
  const context = session();
  for (const turn of conversation.turns) {
    let done;
    let retrieval;
    for await (const event of runTurn(context, turn.question)) {
      if (event.type === 'done') done = event;
      if (event.type === 'retrieval') retrieval = event;
    }
    turns++;
    const ok = done.citations.some((c) => c.location.startsWith(`${turn.path}:`));
    if (ok) cited++;
    if (retrieval?.chunks[0]?.documentPath === turn.path) top1++;
    if (verbose) console.log(`${ok ? 'ok' : '--'}  ${turn.question}  ->  ${retrieval?.query ?? '(no search)'}`);
  }
}
const facts = JSON.parse(fs.readFileSync(path.join(root, 'fixtures/FACTS.json'), 'utf8'));
let quoted = 0;
for (const fact of facts.facts ?? facts) {
  let done;
  for await (const event of runTurn(session(), fact.question)) if (event.type === 'done') done = event;
  const ok = done.answer.includes(fact.contains);
  if (ok) quoted++;
  if (verbose) console.log(`${ok ? 'ok' : '--'}  ${fact.question}  (fact: ${fact.contains})${ok ? '' : `\n    ${done.answer.replace(/\s+/g, ' ').slice(0, 300)}`}`);
}
console.log(`conversations: ${cited}/${turns} answers cite the page that holds the answer; top-1 chunk from it ${top1}/${turns}`);
console.log(`facts: ${quoted}/${(facts.facts ?? facts).length} answers quote the expected text`);
db.close();
fs.rmSync(home, { recursive: true, force: true });
