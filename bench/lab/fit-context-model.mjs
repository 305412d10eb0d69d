#!/usr/bin/env node
// Fits the offline rewriter's context model (src/rewrite/context-model.json): a logistic
// regression over the noun phrases of earlier turns (features: src/rewrite/context.ts),
// and its two thresholds. Fitted on the 'dev' half of the conversations by id (halfOf),
// and scored on the 'held-out' half, which the fit never sees:
//   - MTRAG Cloud and FiQA (bench/out/mtrag, built by bench/mtrag/run.mjs): a phrase is a
//     positive when the reference rewrite adds one of its words to the question;
//   - bench/realdocs follow-ups: a phrase is a positive when it matches the referent a
//     person marked (`referent`), a negative otherwise. The earlier turns' standalone
//     queries and answers come from a run of `node bench/realdocs/run.mjs --json > file`
//     (`--answers file`).
// The thresholds are read off a grid on the dev half: the context threshold and the
// referent threshold that give the best sum of added-word F1 on MTRAG and of
// (right - 2 x wrong referents) / follow-ups on realdocs, as the rewriter itself
// (OfflineRewriter with the fitted weights) rewrites.
//
//   npm run build && node bench/lab/fit-context-model.mjs --answers /tmp/realdocs.json [--write]

import fs from 'node:fs';
import path from 'node:path';
import { halfOf, option, root } from '../turn/common.mjs';

const lib = (p) => import(path.join(root, 'dist', p));
const { OfflineRewriter, CONTEXT_FEATURES: FEATURES, readLastQuestion, topicFeatures, updateTopics } = await lib('rewrite/index.js');
const { addedStems, scoreAddedTerms } = await lib('eval/added-terms.js');
const { openDatabase } = await lib('store/db.js');
const { termShares } = await lib('retrieve/term-stats.js');
const phrases = Number(option('phrases', '3'));
// `--order salience`: the same harness with the hand-made order, for comparison (nothing is fitted or written).
const order = option('order', 'learned');

/** The topics after `history`, as the chat tracks them (each answer as recorded, '' for one the documents were quoted for). */
function topicsAfter(history) {
  let topics = [];
  history.forEach((turn, i) => (topics = updateTopics(topics, { ordinal: i + 1, question: turn.question, standaloneQuery: turn.standaloneQuery, answer: turn.topicAnswer })));
  return topics;
}

// Follow-ups: { half, question, history, topics, termShare, reference? | referent, wrong? }.
const cases = [];
for (const domain of ['cloud', 'fiqa']) {
  const file = path.join(root, `bench/out/mtrag/${domain}/tasks.jsonl`);
  if (!fs.existsSync(file)) throw new Error(`${file} missing: run bench/mtrag/run.mjs first`);
  const termShare = termShares(openDatabase(path.join(root, `bench/out/mtrag/${domain}.db`)));
  for (const line of fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const task = JSON.parse(line);
    if (task.history.length === 0 || !task.reference_rewrite) continue;
    // MTRAG's answers are a model's: the chat tracks their terms too.
    const history = task.history.map((turn) => ({ question: turn.user, standaloneQuery: turn.user, answer: turn.assistant ?? '', topicAnswer: turn.assistant ?? '' }));
    cases.push({ half: halfOf(task.conversation), question: task.question, history, topics: topicsAfter(history), termShare, reference: task.reference_rewrite });
  }
}
const answersFile = option('answers');
if (!answersFile) throw new Error('--answers <file>: the output of node bench/realdocs/run.mjs --json');
const played = new Map(JSON.parse(fs.readFileSync(answersFile, 'utf8')).rows.map((row) => [`${row.conversation}#${row.turn}`, row]));
const realdocsShare = termShares(openDatabase(path.join(root, 'bench/out/realdocs/realdocs.db')));
for (const conversation of JSON.parse(fs.readFileSync(path.join(root, 'bench/realdocs/conversations.json'), 'utf8')).conversations) {
  conversation.turns.forEach((turn, i) => {
    if (i === 0 || !turn.referent) return;
    // An answer that quotes the documents adds no topics (chat/stages/history.ts); a scripted one does.
    // Each earlier turn as that run searched and answered it.
    const history = conversation.turns.slice(0, i).map((earlier, j) => {
      const row = played.get(`${conversation.id}#${j + 1}`);
      return { question: earlier.user, standaloneQuery: row?.standaloneQuery ?? earlier.user, answer: earlier.answer ?? row?.answer ?? '', topicAnswer: earlier.answer ?? '' };
    });
    cases.push({ half: halfOf(conversation.id), question: turn.user, history, topics: topicsAfter(history), termShare: realdocsShare, referent: new RegExp(turn.referent, 'i'), wrong: turn.wrong ? new RegExp(turn.wrong, 'i') : undefined });
  });
}

// The topics and their labels: a topic is a positive when the reference rewrite adds one
// of its words (MTRAG) or when it matches the marked referent (realdocs).
const { stem } = await lib('text/stem.js');
// `--fit-on mtrag|realdocs`: one source's labels only (default both).
const fitOn = option('fit-on', 'both');
const examples = (half) =>
  cases
    .filter((c) => c.half === half && (fitOn === 'both' || (fitOn === 'mtrag') === Boolean(c.reference)))
    .flatMap((c) => {
      const wanted = c.reference ? addedStems(c.question, c.reference) : undefined;
      const latest = Math.max(0, ...c.topics.map((topic) => topic.lastTurn));
      const last = readLastQuestion(c.history.at(-1).standaloneQuery);
      return c.topics.map((topic) => {
        const features = topicFeatures(topic, latest, last, c.termShare);
        const y = wanted ? (topic.term.toLowerCase().split(/\s+/).some((word) => wanted.has(stem(word))) ? 1 : 0) : c.referent.test(topic.term) && !(c.wrong && c.wrong.test(topic.term)) ? 1 : 0;
        return { x: FEATURES.map((name) => features[name]), y };
      });
    });

/** L2-regularised logistic regression by batch gradient descent; returns [bias, ...weights]. */
function fit(data, { l2 = 0.0005, rate = 2, steps = 4000 } = {}) {
  const w = new Array(FEATURES.length + 1).fill(0);
  for (let step = 0; step < steps; step++) {
    const grad = new Array(w.length).fill(0);
    for (const { x, y } of data) {
      let z = w[0];
      for (let j = 0; j < x.length; j++) z += w[j + 1] * x[j];
      const error = 1 / (1 + Math.exp(-z)) - y;
      grad[0] += error;
      for (let j = 0; j < x.length; j++) grad[j + 1] += error * x[j];
    }
    for (let j = 0; j < w.length; j++) w[j] -= rate * (grad[j] / data.length + (j > 0 ? l2 * w[j] : 0));
  }
  return w;
}

function logLoss(data, w) {
  let sum = 0;
  for (const { x, y } of data) {
    let z = w[0];
    for (let j = 0; j < x.length; j++) z += w[j + 1] * x[j];
    const p = Math.min(1 - 1e-9, Math.max(1e-9, 1 / (1 + Math.exp(-z))));
    sum -= y * Math.log(p) + (1 - y) * Math.log(1 - p);
  }
  return sum / data.length;
}

/** The rewriter's own results on a half with `model`: MTRAG added-word precision, recall and F1; realdocs right and wrong referents. */
function evaluate(half, model) {
  const rewriter = new OfflineRewriter({ model, maxContextPhrases: phrases, order });
  let precision = 0;
  let recall = 0;
  let precisionN = 0;
  let recallN = 0;
  let right = 0;
  let wrong = 0;
  let followUps = 0;
  for (const c of cases.filter((one) => one.half === half)) {
    const outcome = rewriter.rewriteSync({ question: c.question, history: c.history, topics: c.topics, policy: 'auto', termShare: c.termShare });
    if (c.reference) {
      const score = scoreAddedTerms(c.question, outcome.standaloneQuery, c.reference);
      if (score.precision !== undefined) (precision += score.precision), precisionN++;
      if (score.recall !== undefined) (recall += score.recall), recallN++;
    } else {
      followUps++;
      const shown = outcome.standaloneQuery;
      const bad = (c.wrong ? c.wrong.test(shown) : false) || insertedOther(c.question, shown, c.referent);
      if (c.referent.test(shown) && !bad) right++;
      if (bad) wrong++;
    }
  }
  const p = precisionN ? precision / precisionN : 0;
  const r = recallN ? recall / recallN : 0;
  return { precision: p, precisionN, recall: r, recallN, f1: p + r > 0 ? (2 * p * r) / (p + r) : 0, right, wrong, followUps };
}

/** Words put into the question itself (not the context in parentheses) that are not the referent (bench/realdocs/run.mjs). */
function insertedOther(question, shown, referent) {
  const asked = question.trim().split(/\s+/);
  const said = shown.replace(/\s*\([^()]*\)\s*$/, '').trim().split(/\s+/);
  const same = (a, b) => a.toLowerCase() === b.toLowerCase();
  let start = 0;
  while (start < asked.length && start < said.length && same(asked[start], said[start])) start++;
  let end = 0;
  while (end < asked.length - start && end < said.length - start && same(asked[asked.length - 1 - end], said[said.length - 1 - end])) end++;
  const inserted = said.slice(start, said.length - end).join(' ');
  return inserted !== '' && !referent.test(inserted);
}

const train = examples('dev');
const test = examples('held-out');
const w = fit(train);
const weights = { bias: round(w[0]) };
FEATURES.forEach((name, j) => (weights[name] = round(w[j + 1])));
const rate = train.filter((e) => e.y).length / train.length;
console.log(`topics: ${train.length} to fit (${train.filter((e) => e.y).length} positive), ${test.length} held out (${test.filter((e) => e.y).length} positive)`);
console.log(`log loss: fit ${logLoss(train, w).toFixed(4)}, held out ${logLoss(test, w).toFixed(4)} (the fit's base rate alone: ${logLoss(test, [Math.log(rate / (1 - rate)), ...FEATURES.map(() => 0)]).toFixed(4)})`);
console.log(`weights ${JSON.stringify(weights)}`);

if (order !== 'learned') {
  console.log(`order ${order}, ${phrases} phrases at most`);
  console.log(`dev:      ${show(evaluate('dev', undefined))}`);
  console.log(`held-out: ${show(evaluate('held-out', undefined))}`);
  process.exit(0);
}

let best;
for (let threshold = 0; threshold <= 0.5; threshold += 0.025) {
  const model = { weights, threshold: round(threshold) };
  const r = evaluate('dev', model);
  const objective = r.f1 + (r.right - 2 * r.wrong) / r.followUps;
  if (process.argv.includes('--verbose')) console.log(`  threshold ${model.threshold}: ${show(r)}`);
  if (!best || objective > best.objective) best = { model, objective, r };
}
const held = evaluate('held-out', best.model);
console.log(`threshold ${best.model.threshold}; ${phrases} phrases at most`);
console.log(`dev (fitted):      ${show(best.r)}`);
console.log(`held-out (unseen): ${show(held)}`);
if (process.argv.includes('--write')) {
  fs.writeFileSync(path.join(root, 'src/rewrite/context-model.json'), `${JSON.stringify(best.model, null, 2)}\n`);
  console.log('wrote src/rewrite/context-model.json');
}

function show(r) {
  return `MTRAG added words precision ${r.precision.toFixed(3)} (${r.precisionN}) recall ${r.recall.toFixed(3)} (${r.recallN}) F1 ${r.f1.toFixed(3)}; realdocs referents right ${r.right}/${r.followUps}, wrong ${r.wrong}`;
}

function round(x) {
  return Math.round(x * 1000) / 1000;
}
