#!/usr/bin/env node
// Measures ragline's query rewriting on MTRAG (Cloud, FiQA): retrieval with the raw
// question, the reference rewrite (Mixtral, from the benchmark) and ragline's own
// offline rewriter in several variants, through the real databases and the real
// Retriever (dist/). Reads ../shared/bench/retrieval_tasks.jsonl in place.
//
//   npx tsc -p .                       # builds dist/
//   node bench/mtrag/prepare.mjs       # bench/out/mtrag/<domain>/docs
//   node bin/ragline.js --db bench/out/mtrag/cloud.db ingest bench/out/mtrag/cloud/docs
//   node bin/ragline.js --db bench/out/mtrag/fiqa.db ingest bench/out/mtrag/fiqa/docs
//   node bench/lab/rewrite-eval.mjs [--domains cloud,fiqa] [--variants a,b] [--dump file.jsonl]
//
// Each earlier turn of a conversation is replayed the way the chat does it: its
// standalone query comes from the same rewriter (history window of 3 exchanges with
// their computed standalone queries), and the topics are updated after it with the
// gold answer (`previous_answers`).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = (p) => path.join(root, 'dist', p);
const { openDatabase } = await import(dist('store/db.js'));
const { Retriever } = await import(dist('retrieve/search.js'));
const { OfflineEmbedder } = await import(dist('providers/offline-embedder.js'));
const { DocumentNames, documentRanks, normalise } = await import(dist('eval/run.js'));
const { scoreQuery, meanMetrics } = await import(dist('eval/metrics.js'));
const { OfflineRewriter, updateTopics, classifyQuestion } = await import(dist('rewrite/index.js'));

const BENCH = process.env.BENCH_DIR ?? path.resolve(root, '../shared/bench');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const domains = arg('domains', 'cloud,fiqa').split(',');
const WINDOW = 3;
const K = 10;

/** Offline rewriter variants: name -> { options, policy, topics } */
const OFFLINE_VARIANTS = {
  offline: { options: {}, policy: 'auto', topics: true },
  'offline-no-topics': { options: {}, policy: 'auto', topics: false },
  'offline-always': { options: {}, policy: 'always', topics: true },
  'offline-expand': { options: { style: 'expand' }, policy: 'auto', topics: true },
  'offline-weight-order': { options: { order: 'weight' }, policy: 'auto', topics: true },
  'offline-2w': { options: { maxContextWords: 2 }, policy: 'auto', topics: true },
  'offline-3w': { options: { maxContextWords: 3 }, policy: 'auto', topics: true },
  'offline-6w': { options: { maxContextWords: 6 }, policy: 'auto', topics: true },
};
const wanted = arg('variants', '') ? new Set(arg('variants').split(',')) : null;

function simulate(task, variant) {
  const rewriter = new OfflineRewriter(variant.options);
  let topics = [];
  const turns = [];
  const run = (question) =>
    rewriter.rewriteSync({ question, history: turns.slice(-WINDOW), topics: variant.topics ? topics : [], policy: variant.policy });
  task.previous_questions.forEach((question, i) => {
    const outcome = run(question);
    const standaloneQuery = outcome.decision === 'small_talk' ? question : outcome.standaloneQuery;
    turns.push({ question, standaloneQuery, answer: task.previous_answers[i] ?? '' });
    topics = updateTopics(topics, { ordinal: i + 1, question, standaloneQuery, answer: task.previous_answers[i] ?? '' });
  });
  return run(task.question);
}

/** Reciprocal rank fusion of two ranked chunk lists (k = 60), top 10. */
function rrf(a, b, wa = 1, wb = 1) {
  const scores = new Map();
  const add = (list, w) => list.forEach((chunk, i) => {
    const entry = scores.get(chunk.chunkId) ?? { chunk, score: 0 };
    entry.score += w / (60 + i + 1);
    scores.set(chunk.chunkId, entry);
  });
  add(a, wa);
  add(b, wb);
  return [...scores.values()].sort((x, y) => y.score - x.score).slice(0, K).map((e) => e.chunk);
}

const allTasks = fs
  .readFileSync(path.join(BENCH, 'retrieval_tasks.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l));

const dump = arg('dump', '');
const dumpLines = [];
const report = {};
for (const domain of domains) {
  const db = openDatabase(path.join(root, `bench/out/mtrag/${domain}.db`), { readonly: true });
  const retriever = new Retriever(db, new OfflineEmbedder());
  const names = new DocumentNames(db);
  const cache = new Map();
  const search = async (query) => {
    if (!cache.has(query)) cache.set(query, await retriever.search(query, { k: K }));
    return cache.get(query);
  };
  const tasks = allTasks.filter((t) => t.domain === domain);
  const rows = {}; // variant -> [{task, metrics}]
  const record = (variant, task, chunks, query, extra = {}) => {
    const relevant = task.relevant_passage_ids.map((id) => names.resolve(id) ?? `missing:${id}`);
    const ranked = documentRanks(chunks.slice(0, K)).map((p) => p ?? '');
    (rows[variant] ??= []).push({ task, metrics: scoreQuery(ranked, relevant), query, ...extra });
  };
  const started = Date.now();
  for (const task of tasks) {
    const raw = await search(task.question);
    record('raw', task, raw, task.question);
    record('reference', task, await search(task.reference_rewrite ?? task.question), task.reference_rewrite);
    for (const [name, variant] of Object.entries(OFFLINE_VARIANTS)) {
      if (wanted && !wanted.has(name) && name !== 'offline') continue;
      const outcome = simulate(task, variant);
      const chunks = await search(outcome.standaloneQuery);
      record(name, task, chunks, outcome.standaloneQuery, { decision: outcome.decision, reason: outcome.reason });
      if (name === 'offline') {
        record('fuse(raw,offline)', task, outcome.decision === 'rewritten' ? rrf(raw, chunks) : raw, outcome.standaloneQuery);
        record('fuse(raw,offline 0.5)', task, outcome.decision === 'rewritten' ? rrf(raw, chunks, 1, 0.5) : raw, outcome.standaloneQuery);
        record('fuse(raw,reference)', task, rrf(raw, await search(task.reference_rewrite ?? task.question)), task.reference_rewrite);
      }
    }
  }
  const differs = (t) => t.reference_rewrite && normalise(t.reference_rewrite) !== normalise(t.question);
  const summary = {};
  for (const [variant, items] of Object.entries(rows)) {
    const m = (list) => ({ n: list.length, ...meanMetrics(list.map((r) => r.metrics)) });
    const rewritten = items.filter((r) => r.decision === 'rewritten');
    summary[variant] = {
      all: m(items),
      differs: m(items.filter((r) => differs(r.task))),
      later: m(items.filter((r) => r.task.turn > 1)),
      rewrittenShare: items[0]?.decision === undefined ? undefined : rewritten.length / items.length,
      skippedLaterShare:
        items[0]?.decision === undefined
          ? undefined
          : items.filter((r) => r.task.turn > 1 && r.decision !== 'rewritten').length / items.filter((r) => r.task.turn > 1).length,
    };
    if (dump) for (const r of items) dumpLines.push({ domain, variant, id: r.task.task_id, turn: r.task.turn, question: r.task.question, query: r.query, reference: r.task.reference_rewrite, decision: r.decision, reason: r.reason, r5: r.metrics.recall5, mrr: r.metrics.mrr10 });
  }
  // The gate on its own: how many later turns it calls follow-ups, against the reference's "needs a rewrite".
  const later = tasks.filter((t) => t.turn > 1);
  const gate = { followUp: 0, agreeDiffers: 0, differs: 0, missedDiffers: 0 };
  for (const t of later) {
    const kind = classifyQuestion(t.question, true).kind;
    if (kind === 'follow_up') gate.followUp++;
    if (differs(t)) {
      gate.differs++;
      if (kind === 'follow_up') gate.agreeDiffers++;
      else gate.missedDiffers++;
    }
  }
  summary.gate = { laterTurns: later.length, ...gate };
  report[domain] = summary;
  db.close();
  console.error(`${domain}: ${tasks.length} tasks in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

const f = (x) => x.toFixed(3);
for (const [domain, summary] of Object.entries(report)) {
  console.log(`\n## ${domain}`);
  console.log('| variant | all R@5 | all MRR@10 | differs R@5 | differs MRR@10 | later turns rewritten |');
  console.log('|---|---|---|---|---|---|');
  for (const [variant, s] of Object.entries(summary)) {
    if (variant === 'gate') continue;
    const share = s.skippedLaterShare === undefined ? '' : `${(100 * (1 - s.skippedLaterShare)).toFixed(0)}%`;
    console.log(`| ${variant} | ${f(s.all.recall5)} | ${f(s.all.mrr10)} | ${f(s.differs.recall5)} | ${f(s.differs.mrr10)} | ${share} |`);
  }
  console.log(`gate: ${JSON.stringify(summary.gate)} (n all ${summary.raw.all.n}, differs ${summary.raw.differs.n})`);
}
if (dump) fs.writeFileSync(dump, dumpLines.map((l) => JSON.stringify(l)).join('\n') + '\n');
fs.mkdirSync(path.join(root, 'bench/out/lab'), { recursive: true });
fs.appendFileSync(path.join(root, 'bench/out/lab/rewrite-results.jsonl'), JSON.stringify({ at: new Date().toISOString(), report }) + '\n');
