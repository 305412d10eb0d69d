#!/usr/bin/env node
// Follow-ups on real documents: the conversations of bench/realdocs/conversations.json
// played through the chat's own turn (runTurn: history, gate, offline rewriter,
// hybrid retrieval, extractive answer, stored in a session) over documentation
// shipped on this machine (bench/realdocs/docs.mjs says where). Scores:
//   - referents: follow-ups whose shown standalone query carries the referent
//     (`referent`) and not the tempting wrong one (`wrong`);
//   - top 5: turns with one of the expected documents among the first 5 chunks;
//   - facts: first answers that quote the fact (`fact`).
// The database is cached under bench/out/realdocs (re-ingested only where a file
// changed). Skips cleanly when none of the documentation is on this machine.
//
//   node bench/realdocs/run.mjs [--verbose] [--json] [--with-copies] [--only <conversation id>] [--half dev|held-out|later|later-2|later-3|later-4|later-5|later-6|later-7|later-8|later-9|later-10] [--set pip|heldout-12]
//
// `--with-copies` ingests Node's HTML pages too (`fs.html` beside `fs.md`, and `all.html`,
// as a user's folder has them; its own index, bench/out/realdocs-copies): copies of a
// document in several formats must take one result slot, not several.
//
// `--set pip` plays bench/realdocs/pip.json over pip's documentation alone (its own
// index, bench/out/realdocs-pip): Sphinx sources in reStructuredText and MyST, some
// gzipped, as Debian ships them. `--set heldout-12` plays bench/realdocs/heldout-12.json
// over Docker's reference and SQLite's manual (`apt-get install -y docker-doc sqlite3-doc`;
// its own index, bench/out/realdocs-heldout-12): a held-out set, whose misses are not read
// while the work it measures is under way.
//
// Each conversation belongs to a fixed half of the set (halfOf its id, bench/turn/common.mjs):
// the answerer is tuned on 'dev' and checked on 'held-out'; facts are reported for both.
// First questions written later (`"written": "after-answers"`) form their own part,
// 'later', reported apart: a check written before the change it checks; a second such
// set (`"after-answers-2"`, part 'later-2') was written once 'later' had been used, a
// third (`"after-answers-3"`, part 'later-3') once 'later-2' had been, and a fourth
// (`"after-answers-4"`, part 'later-4') once 'later-3' had been: first questions and four
// conversations with follow-ups, whose follow-ups count in the referent and top-5 rows;
// a fifth, of the same shape (`"after-answers-5"`, part 'later-5'), once 'later-4' had been,
// a sixth (`"after-answers-6"`, part 'later-6') once 'later-5' had been, a seventh
// (`"after-answers-7"`, part 'later-7') once 'later-6' had been, an eighth, conversations
// with follow-ups only (`"after-answers-8"`, part 'later-8'), once 'later-7' had been, and a
// ninth (`"after-answers-9"`, part 'later-9') once 'later-8' had been, and a tenth
// (`"after-answers-10"`, part 'later-10') while 'later-9' was being used.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { halfOf, option, turnModules } from '../turn/common.mjs';
import { EXCLUDE, SETS, stageDocs } from './docs.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const setName = option('set') ?? 'default';
if (!SETS[setName]) {
  console.error(`--set: one of ${Object.keys(SETS).join(', ')}, got "${setName}"`);
  process.exit(2);
}
const withCopies = process.argv.includes('--with-copies');
const out = path.join(root, setName === 'default' ? `bench/out/realdocs${withCopies ? '-copies' : ''}` : `bench/out/realdocs-${setName}`);
const dbPath = path.join(out, 'realdocs.db');
const verbose = process.argv.includes('--verbose');
const asJson = process.argv.includes('--json');
const only = option('only');
const onlyHalf = option('half');

const { folder, found, missing } = stageDocs(out, SETS[setName]);
if (found.length === 0) {
  console.log(`skipped: none of the documentation is on this machine (${missing.join(', ')})`);
  process.exit(0);
}
const set = JSON.parse(fs.readFileSync(path.join(here, setName === 'default' ? 'conversations.json' : `${setName}.json`), 'utf8'));
// Conversations over a documentation set that is missing here are left out.
const LATER_PARTS = { 'after-answers': 'later', 'after-answers-2': 'later-2', 'after-answers-3': 'later-3', 'after-answers-4': 'later-4', 'after-answers-5': 'later-5', 'after-answers-6': 'later-6', 'after-answers-7': 'later-7', 'after-answers-8': 'later-8', 'after-answers-9': 'later-9', 'after-answers-10': 'later-10' };
const partOf = (conversation) => LATER_PARTS[conversation.written] ?? halfOf(conversation.id);
const conversations = set.conversations.filter(
  (conversation) => (!only || conversation.id === only) && (!onlyHalf || partOf(conversation) === onlyHalf) && conversation.turns.every((turn) => turn.doc.some((doc) => found.includes(doc.split('/')[0]))),
);

const env = { ...process.env, RAGLINE_PROVIDER: 'offline', NO_COLOR: '1', HOME: out };
const ingest = spawnSync(process.execPath, [path.join(root, 'bin/ragline.js'), '--db', dbPath, 'ingest', folder, ...(withCopies ? [] : ['--exclude', ...EXCLUDE]), '--json'], {
  env,
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
if (ingest.status !== 0) {
  process.stderr.write(ingest.stderr);
  process.exit(1);
}

const { openDatabase, resolveConfig, createEmbedder, Retriever, createRewriter, runTurn, createSession } = await turnModules();
const { NOT_COVERED } = await import(path.join(root, 'dist/chat/extractive.js'));

const { config } = resolveConfig({ env: { HOME: out, RAGLINE_PROVIDER: 'offline' }, flags: { db: dbPath } });
const db = openDatabase(dbPath);
const retriever = new Retriever(db, await createEmbedder(config));
const rewriter = createRewriter(undefined);

/** A chat model that says `text`: an earlier answer the conversation fixes (an enumeration). */
function scripted(text) {
  return {
    id: 'bench:scripted-answer',
    async *stream() {
      yield { type: 'token', text };
    },
  };
}

/**
 * The words a rewrite put into the question itself (the context terms in parentheses
 * at its end left out): what stands between the longest common word prefix and suffix.
 */
function insertedWords(question, standaloneQuery) {
  const asked = question.trim().split(/\s+/);
  const shown = standaloneQuery.replace(/\s*\([^()]*\)\s*$/, '').trim().split(/\s+/);
  const same = (a, b) => a.toLowerCase() === b.toLowerCase();
  let start = 0;
  while (start < asked.length && start < shown.length && same(asked[start], shown[start])) start++;
  let end = 0;
  while (end < asked.length - start && end < shown.length - start && same(asked[asked.length - 1 - end], shown[shown.length - 1 - end])) end++;
  return shown.slice(start, shown.length - end).join(' ');
}

/** A path without its format extensions: `node/fs.md` and `node/fs.html` are one document. */
const formatless = (documentPath) => documentPath.replace(/\.gz$/, '').replace(/\.(?:md|html?|txt|rst|pdf)$/, '');

const rows = [];
const rewriteMs = [];
for (const conversation of conversations) {
  const sessionId = createSession(db).id;
  for (const [index, turn] of conversation.turns.entries()) {
    const context = { db, config, retriever, rewriter, sessionId, ...(turn.answer ? { answerModel: scripted(turn.answer) } : {}) };
    let rewrite;
    let retrieval;
    let done;
    for await (const event of runTurn(context, turn.user)) {
      if (event.type === 'rewrite') rewrite = event;
      else if (event.type === 'retrieval') retrieval = event;
      else if (event.type === 'done') done = event;
    }
    rewriteMs.push(rewrite.ms);
    const top5 = [...new Set((retrieval?.chunks ?? []).slice(0, 5).map((chunk) => chunk.documentPath))];
    const row = {
      conversation: conversation.id,
      half: partOf(conversation),
      turn: index + 1,
      kind: index === 0 ? 'first' : turn.kind ?? 'follow-up',
      question: turn.user,
      standaloneQuery: rewrite.standaloneQuery,
      decision: rewrite.decision,
      reason: rewrite.reason,
      top5,
      // With copies, the expected document in another format counts (node/fs.html for node/fs.md).
      docHit: turn.doc.some((doc) => top5.some((shown) => shown === doc || (withCopies && formatless(shown) === formatless(doc)))),
      answer: done.answer,
    };
    if (index > 0) {
      const referent = new RegExp(turn.referent, 'i');
      const carries = referent.test(rewrite.standaloneQuery);
      // Words put in place of the user's own (a pronoun replaced) must be the referent:
      // "can the read measure the stack too? (Massif)" carries the name, but not where "it" stood.
      const inserted = insertedWords(turn.user, rewrite.standaloneQuery);
      const wrong = (turn.wrong ? new RegExp(turn.wrong, 'i').test(rewrite.standaloneQuery) : false) || (inserted !== '' && !referent.test(inserted));
      Object.assign(row, { referent: turn.referent, wrong: turn.wrong, inserted, carries, carriesWrong: wrong, referentOk: carries && !wrong });
    }
    if (index === 0 && turn.fact && !turn.answer) Object.assign(row, { fact: turn.fact, quotesFact: new RegExp(turn.fact, 'i').test(done.answer) });
    rows.push(row);
  }
}

// Questions the documents do not answer (default set only, and not with --only/--half):
// each asked in a session of its own; the honest answer says the documents don't cover it.
const outOfScopePath = path.join(here, 'out-of-scope.json');
const outOfScope = [];
if (setName === 'default' && !only && !onlyHalf && fs.existsSync(outOfScopePath)) {
  for (const { question, absent, written } of JSON.parse(fs.readFileSync(outOfScopePath, 'utf8')).questions) {
    const context = { db, config, retriever, rewriter, sessionId: createSession(db).id };
    let done;
    for await (const event of runTurn(context, question)) if (event.type === 'done') done = event;
    outOfScope.push({ question, absent, ...(written ? { written } : {}), answer: done.answer, declined: done.answer.includes(NOT_COVERED) });
  }
}
db.close();

const followUps = rows.filter((row) => row.turn > 1);
const writtenAfter = new Set(conversations.filter((conversation) => conversation.written === 'after').map((conversation) => conversation.id));
const laterFollowUps = followUps.filter((row) => writtenAfter.has(row.conversation));
const firsts = rows.filter((row) => row.turn === 1);
const facts = rows.filter((row) => row.quotesFact !== undefined);
const share = (items, test) => ({ hits: items.filter(test).length, n: items.length });
const pct = ({ hits, n }) => `${hits}/${n} (${n ? ((100 * hits) / n).toFixed(0) : 0}%)`;
const sorted = [...rewriteMs].sort((a, b) => a - b);
const summary = {
  documentation: found,
  missing,
  conversations: conversations.length,
  referents: share(followUps, (row) => row.referentOk),
  followUpTop5: share(followUps, (row) => row.docHit),
  referentsWrittenAfter: share(laterFollowUps, (row) => row.referentOk),
  followUpTop5WrittenAfter: share(laterFollowUps, (row) => row.docHit),
  firstTop5: share(firsts, (row) => row.docHit),
  firstAnswersQuoteFact: share(facts, (row) => row.quotesFact),
  firstAnswersQuoteFactDev: share(facts.filter((row) => row.half === 'dev'), (row) => row.quotesFact),
  firstAnswersQuoteFactHeldOut: share(facts.filter((row) => row.half === 'held-out'), (row) => row.quotesFact),
  firstAnswersQuoteFactLater: share(facts.filter((row) => row.half === 'later'), (row) => row.quotesFact),
  firstAnswersQuoteFactLater2: share(facts.filter((row) => row.half === 'later-2'), (row) => row.quotesFact),
  firstAnswersQuoteFactLater3: share(facts.filter((row) => row.half === 'later-3'), (row) => row.quotesFact),
  firstAnswersQuoteFactLater4: share(facts.filter((row) => row.half === 'later-4'), (row) => row.quotesFact),
  firstAnswersQuoteFactLater5: share(facts.filter((row) => row.half === 'later-5'), (row) => row.quotesFact),
  firstAnswersQuoteFactLater6: share(facts.filter((row) => row.half === 'later-6'), (row) => row.quotesFact),
  firstAnswersQuoteFactLater7: share(facts.filter((row) => row.half === 'later-7'), (row) => row.quotesFact),
  firstAnswersQuoteFactLater8: share(facts.filter((row) => row.half === 'later-8'), (row) => row.quotesFact),
  firstAnswersQuoteFactLater9: share(facts.filter((row) => row.half === 'later-9'), (row) => row.quotesFact),
  firstAnswersQuoteFactLater10: share(facts.filter((row) => row.half === 'later-10'), (row) => row.quotesFact),
  firstDeclined: share(firsts.filter((row) => typeof row.answer === 'string'), (row) => row.answer.includes(NOT_COVERED)),
  outOfScopeDeclined: share(outOfScope, (row) => row.declined),
  outOfScopeDeclinedWrittenAfter: share(outOfScope.filter((row) => row.written === 'after-instrument'), (row) => row.declined),
  rewriteMsP50: sorted[Math.floor(sorted.length / 2)],
};
fs.mkdirSync(out, { recursive: true });
fs.writeFileSync(path.join(out, 'report.json'), JSON.stringify({ summary, rows, outOfScope }, null, 2));

if (asJson) {
  console.log(JSON.stringify({ summary, rows, outOfScope }, null, 2));
} else {
  if (verbose) {
    for (const row of rows) {
      const marks = [
        row.referentOk === undefined ? '' : row.referentOk ? 'ref ok' : row.carriesWrong ? 'WRONG REF' : 'NO REF',
        row.docHit ? 'top5 ok' : 'TOP5 MISS',
        row.quotesFact === undefined ? '' : row.quotesFact ? 'fact ok' : 'NO FACT',
      ].filter(Boolean);
      console.log(`${row.conversation}#${row.turn} (${row.half}) [${marks.join(', ')}] ${row.question}`);
      if (row.turn > 1) console.log(`    -> ${row.standaloneQuery}   (${row.decision}: ${row.reason})${row.inserted ? ` [in place: ${row.inserted}]` : ''}`);
      if (!row.docHit) console.log(`    top 5: ${row.top5.join(', ')}`);
      if (row.quotesFact === false) console.log(`    answer: ${row.answer.replace(/\s+/g, ' ').slice(0, 240)}`);
    }
    for (const row of outOfScope) if (!row.declined) console.log(`out of scope [ANSWERED] ${row.question}\n    answer: ${row.answer.replace(/\s+/g, ' ').slice(0, 240)}`);
    console.log('');
  }
  console.log(`documentation: ${found.join(', ')}${missing.length ? ` (missing: ${missing.join(', ')})` : ''}; ${conversations.length} conversations`);
  console.log('| measure | result |');
  console.log('|---|---|');
  console.log(`| follow-ups carrying the right referent and no wrong one | ${pct(summary.referents)} |`);
  console.log(`| follow-ups with an expected document in the top 5 | ${pct(summary.followUpTop5)} |`);
  if (laterFollowUps.length > 0) {
    console.log(`| of them, written after the rewriter changed: right referent | ${pct(summary.referentsWrittenAfter)} |`);
    console.log(`| of them, written after the rewriter changed: document in the top 5 | ${pct(summary.followUpTop5WrittenAfter)} |`);
  }
  console.log(`| first questions with an expected document in the top 5 | ${pct(summary.firstTop5)} |`);
  console.log(`| first answers quoting the fact | ${pct(summary.firstAnswersQuoteFact)} |`);
  console.log(`| of them, dev half / held-out half | ${pct(summary.firstAnswersQuoteFactDev)} / ${pct(summary.firstAnswersQuoteFactHeldOut)} |`);
  if (summary.firstAnswersQuoteFactLater.n > 0) console.log(`| of them, first questions written later (after-answers) | ${pct(summary.firstAnswersQuoteFactLater)} |`);
  if (summary.firstAnswersQuoteFactLater2.n > 0) console.log(`| of them, the second set written later (after-answers-2) | ${pct(summary.firstAnswersQuoteFactLater2)} |`);
  if (summary.firstAnswersQuoteFactLater3.n > 0) console.log(`| of them, the third set written later (after-answers-3) | ${pct(summary.firstAnswersQuoteFactLater3)} |`);
  if (summary.firstAnswersQuoteFactLater4.n > 0) console.log(`| of them, the fourth set written later (after-answers-4) | ${pct(summary.firstAnswersQuoteFactLater4)} |`);
  if (summary.firstAnswersQuoteFactLater5.n > 0) console.log(`| of them, the fifth set written later (after-answers-5) | ${pct(summary.firstAnswersQuoteFactLater5)} |`);
  if (summary.firstAnswersQuoteFactLater6.n > 0) console.log(`| of them, the sixth set written later (after-answers-6) | ${pct(summary.firstAnswersQuoteFactLater6)} |`);
  if (summary.firstAnswersQuoteFactLater7.n > 0) console.log(`| of them, the seventh set written later (after-answers-7) | ${pct(summary.firstAnswersQuoteFactLater7)} |`);
  if (summary.firstAnswersQuoteFactLater8.n > 0) console.log(`| of them, the eighth set written later (after-answers-8) | ${pct(summary.firstAnswersQuoteFactLater8)} |`);
  if (summary.firstAnswersQuoteFactLater9.n > 0) console.log(`| of them, the ninth set written later (after-answers-9) | ${pct(summary.firstAnswersQuoteFactLater9)} |`);
  if (summary.firstAnswersQuoteFactLater10.n > 0) console.log(`| of them, the tenth set written later (after-answers-10) | ${pct(summary.firstAnswersQuoteFactLater10)} |`);
  console.log(`| first questions answered "the documents don't seem to cover this" | ${pct(summary.firstDeclined)} |`);
  if (outOfScope.length > 0) console.log(`| questions the documents do not cover (out-of-scope.json) answered so | ${pct(summary.outOfScopeDeclined)} |`);
  if (summary.outOfScopeDeclinedWrittenAfter.n > 0) console.log(`| of them, written after the rule for "with <tool>" (after-instrument) | ${pct(summary.outOfScopeDeclinedWrittenAfter)} |`);
  console.log(`| rewrite step, p50 ms | ${summary.rewriteMsP50.toFixed(2)} |`);
}
