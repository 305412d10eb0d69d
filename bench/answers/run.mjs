#!/usr/bin/env node
// Offline answers on real documentation: the first questions of questions.json
// through the real runTurn (offline rewriter, embedder and extractive answerer),
// each in a new session, over the documentation shipped with this machine image
// (read where it is, never copied). For each question: is the document that holds
// the answer in the top 5, is it cited, and does the answer quote one of its facts.
// Folders that are absent are skipped with their questions; with none, it exits 0.
//
//   npx tsc -p . && node bench/answers/run.mjs [--verbose] [--db FILE] [--json] [--half dev|held-out]
//
// Each question belongs to a fixed half of the set (halfOf its text, bench/turn/common.mjs):
// the answerer is tuned on 'dev' and checked on 'held-out'; both are reported.
// --db keeps the index in FILE (ingested when missing or changed); the default is
// bench/out/answers/realdocs.db.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { halfOf, option, turnModules } from '../turn/common.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const flag = (name) => process.argv.includes(`--${name}`);

const set = JSON.parse(fs.readFileSync(path.join(here, 'questions.json'), 'utf8'));
const present = Object.entries(set.roots).filter(([, r]) => fs.existsSync(r.dir));
if (present.length === 0) {
  console.log('answers: none of the documentation folders is on this machine; skipped');
  process.exit(0);
}

const { openDatabase, resolveConfig, createEmbedder, Retriever, createRewriter, runTurn, createSession, ingest } = await turnModules();

const dbPath = path.resolve(option('db', path.join(root, 'bench/out/answers/realdocs.db')));
fs.mkdirSync(path.dirname(dbPath), { recursive: true });
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-answers-'));
const { config } = resolveConfig({ env: { HOME: home, RAGLINE_PROVIDER: 'offline' }, flags: { db: dbPath } });
const db = openDatabase(dbPath, { create: true });
const embedder = await createEmbedder(config);
for (const [, r] of present) {
  await ingest({ root: r.dir, include: r.include, db, embedder, chunker: config.chunk, maxFileBytes: config.ingest.maxFileBytes });
}
const retriever = new Retriever(db, embedder);

/** Lower case, without Markdown/RST markup, whitespace collapsed. */
const normalize = (text) => text.toLowerCase().replace(/[`*[\]]/g, '').replace(/\s+/g, ' ');
const rootOf = (q) => present.find(([name, r]) => set.questions && (q.root ?? guessRoot(q)) === name);
function guessRoot(q) {
  if (q.doc.startsWith('api/')) return 'nodejs';
  if (q.doc.endsWith('.html')) return 'valgrind';
  if (/^(commands|configuring-npm|using-npm)\//.test(q.doc)) return 'npm';
  return 'cmake';
}

let asked = 0;
let quoted = 0;
let top5 = 0;
let cited = 0;
let declined = 0;
const rows = [];
const onlyHalf = option('half');
for (const q of set.questions) {
  if (!rootOf(q) || (onlyHalf && halfOf(q.question) !== onlyHalf)) continue;
  const context = { db, config, retriever, rewriter: createRewriter(undefined), sessionId: createSession(db).id };
  let done;
  let retrieval;
  for await (const event of runTurn(context, q.question)) {
    if (event.type === 'done') done = event;
    if (event.type === 'retrieval') retrieval = event;
  }
  asked++;
  const isDoc = (p) => p === q.doc || p.endsWith(`/${q.doc}`);
  const inTop5 = (retrieval?.chunks ?? []).slice(0, 5).some((c) => isDoc(c.documentPath));
  const isCited = done.citations.some((c) => isDoc(c.location.replace(/:[^:]*$/, '')));
  const answer = normalize(done.answer);
  const ok = q.facts.some((fact) => answer.includes(normalize(fact)));
  const noAnswer = done.answer.includes("don't seem to cover");
  quoted += ok ? 1 : 0;
  top5 += inTop5 ? 1 : 0;
  cited += isCited ? 1 : 0;
  declined += noAnswer ? 1 : 0;
  rows.push({ question: q.question, half: halfOf(q.question), doc: q.doc, quoted: ok, top5: inTop5, cited: isCited, answer: done.answer });
  if (flag('verbose')) {
    console.log(`${ok ? 'ok' : '--'} ${inTop5 ? 'top5' : '    '} [${halfOf(q.question)}] ${q.question}`);
    for (const c of (retrieval?.chunks ?? []).slice(0, 5)) console.log(`     [${c.rank}] ${c.documentPath.split('/').slice(-2).join('/')} :: ${c.heading}`);
    console.log(done.answer.replace(/^/gm, '     | '));
  }
}
const pct = (n) => `${n}/${asked} (${Math.round((100 * n) / asked)}%)`;
if (flag('json')) console.log(JSON.stringify({ asked, quoted, top5, cited, declined, rows }, null, 2));
else {
  console.log(`folders: ${present.map(([name]) => name).join(', ')}`);
  const halves = ['dev', 'held-out'].map((half) => {
    const of = rows.filter((row) => row.half === half);
    return `${half} ${of.filter((row) => row.quoted).length}/${of.length}`;
  });
  console.log(`first answers that quote the fact: ${pct(quoted)} (${halves.join(', ')})`);
  console.log(`expected document in the top 5: ${pct(top5)}; cited: ${pct(cited)}; declined: ${declined}`);
}
db.close();
fs.rmSync(home, { recursive: true, force: true });
