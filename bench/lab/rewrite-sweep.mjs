#!/usr/bin/env node
// Sweeps offline query-rewrite strategies on MTRAG (Cloud, FiQA) the way `ragline eval`
// measures them: the tasks of bench/out/mtrag/<domain>/tasks.jsonl, the chunked
// databases (default chunking, c3000), the real Retriever from dist/, and every
// variant scored alone and fused with the raw question (retrieval.rawWeight = 1, the
// chat's default; `ragline+raw` in `ragline eval`). Earlier turns are replayed like
// src/eval/conversation.ts: each one's standalone query comes from the same strategy,
// topics are updated with the gold answer, the window holds 3 exchanges.
//
//   npx tsc -p .
//   node bench/lab/rewrite-sweep.mjs [--domains fiqa,cloud] [--variants shipped,prevq-3] [--dump /tmp/x.jsonl]
//
// A strategy is `(request) => { standaloneQuery, decision }` with the chat's RewriteRequest;
// `shipped` is dist's OfflineRewriter as the chat uses it. The others are prototypes:
// whichever wins is ported to src/rewrite/ and measured again as `shipped` and with `ragline eval`.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = (p) => path.join(root, 'dist', p);
const { openDatabase } = await import(dist('store/db.js'));
const { Retriever } = await import(dist('retrieve/search.js'));
const { OfflineEmbedder } = await import(dist('providers/offline-embedder.js'));
const { DocumentNames, runEval, parseTasks } = await import(dist('eval/run.js'));
const { fuse } = await import(dist('retrieve/fuse.js'));
const { buildFtsQuery } = await import(dist('retrieve/fts-query.js'));
const { OfflineRewriter, updateTopics, classifyQuestion, extractTerms, rankTopics } = await import(dist('rewrite/index.js'));
const { tokenize } = await import(dist('text/tokenize.js'));
const { stem } = await import(dist('text/stem.js'));
const { isStopword } = await import(dist('text/stopwords.js'));

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const domains = arg('domains', 'fiqa,cloud').split(',');
const WINDOW = 3;
const RAW_WEIGHT = Number(arg('raw-weight', '1'));
/** `--raw-rule c:w`: questions with at most c content words are fused with weight w instead (a vague question's own results are noise). */
const RAW_RULE = arg('raw-rule', '') ? arg('raw-rule').split(':').map(Number) : null;
/** `--raw-idf share:w`: questions whose rarest content word is in more than `share` of the chunks are fused with weight w. */
const RAW_IDF = arg('raw-idf', '') ? arg('raw-idf').split(':').map(Number) : null;
let docShare = () => 0;
/**
 * `--terms wk[:wv]`: instead of fusing the rewrite's and the raw question's ranked lists, one
 * weighted query: keyword score = bm25(question's words) + wk x bm25(words the rewrite added),
 * vector = normalise(v(question) + wv x v(added words)) (wv default wk); then the usual hybrid fusion.
 */
const TERMS = arg('terms', '') ? arg('terms').split(':').map(Number) : null;
/** With --terms: `--terms-raw r` also fuses the raw question's own ranked list at weight r (list fusion, as today). */
const TERMS_RAW = Number(arg('terms-raw', '0'));
/** With --terms: `--terms-norm` caps the added words' total weight at the question's content-word count (wk x min(1, nq / nadded)). */
const TERMS_NORM = process.argv.includes('--terms-norm');
/** With --terms: `--terms-idf share:wk`: a question whose rarest content word is in at most `share` of the chunks gets wk instead. */
const TERMS_IDF = arg('terms-idf', '') ? arg('terms-idf').split(':').map(Number) : null;
const rawWeightFor = (question) => {
  if (RAW_RULE && content(question).length <= RAW_RULE[0]) return RAW_RULE[1];
  if (RAW_IDF || TERMS_IDF) {
    const rarest = Math.min(1, ...content(question).map((word) => docShare(word)));
    if (rarest > RAW_IDF[0]) return RAW_IDF[1];
  }
  return RAW_WEIGHT;
};

// ---- prototype strategies -------------------------------------------------------------

const content = (text) => tokenize(text, { identifiers: true }).filter((w) => !isStopword(w) && !/^\d+$/.test(w) && w.length > 1);
const stems = (text) => new Set(tokenize(text, { identifiers: true }).map((w) => stem(w)));

/** Question + up to n context words (not already in the question) taken from `source(request)`. */
function appendWords(source, n, { gate = 'auto' } = {}) {
  return (request) => {
    const hasHistory = request.history.length > 0;
    const kind = classifyQuestion(request.question, hasHistory).kind;
    if (kind === 'small_talk') return { standaloneQuery: request.question, decision: 'small_talk' };
    if (!hasHistory) return { standaloneQuery: request.question, decision: 'skipped' };
    if (gate === 'auto' && kind !== 'follow_up') return { standaloneQuery: request.question, decision: 'skipped' };
    const present = stems(request.question);
    const added = [];
    for (const word of source(request)) {
      const s = stem(word);
      if (present.has(s)) continue;
      present.add(s);
      added.push(word);
      if (added.length >= n) break;
    }
    if (added.length === 0) return { standaloneQuery: request.question, decision: 'skipped' };
    return { standaloneQuery: `${request.question.trim()} (${added.join(' ')})`, decision: 'rewritten' };
  };
}
const prevQuestion = (r) => content(r.history.at(-1)?.question ?? '');
const prevStandalone = (r) => content(r.history.at(-1)?.standaloneQuery ?? '');
const prevQuestionTerms = (r) => extractTerms(r.history.at(-1)?.question ?? '').flatMap((t) => content(t.term));
const topicWords = (r) => rankTopics(r.topics).flatMap((t) => content(t.term));
const questionTopicWords = (r) => rankTopics(r.topics.filter((t) => t.source !== 'answer')).flatMap((t) => content(t.term));
/** The first user question of the window that is not a follow-up (the conversation's subject), then the previous one. */
const anchor = (r) => content(r.history.at(-1)?.standaloneQuery ?? '').concat(content(r.history[0]?.question ?? ''));

const STRATEGIES = {
  /** The reference rewrite (not a strategy: the benchmark's Mixtral rewrite, to see it fused with raw). */
  ref: () => undefined,
  shipped: () => {
    const rewriter = new OfflineRewriter();
    return (request) => rewriter.rewriteSync(request);
  },
  'shipped-always': () => {
    const rewriter = new OfflineRewriter();
    return (request) => rewriter.rewriteSync({ ...request, policy: 'always' });
  },
};
const prevStandaloneTerms = (r) => extractTerms(r.history.at(-1)?.standaloneQuery ?? '').flatMap((t) => content(t.term));
const SOURCES = {
  mix: (r) => prevQuestionTerms(r).concat(topicWords(r)),
  sqmix: (r) => prevStandaloneTerms(r).concat(topicWords(r)),
  topicsmix: (r) => topicWords(r).slice(0, 3).concat(prevQuestionTerms(r), topicWords(r)),
  sqterms: prevStandaloneTerms,
  prevq: prevQuestion, prevsq: prevStandalone, prevterms: prevQuestionTerms, topics: topicWords, qtopics: questionTopicWords, anchor };
/** `<source>-<n>[-always]`, e.g. `prevterms-3`, `topics-8-always`. */
function strategyFor(name) {
  if (STRATEGIES[name]) return STRATEGIES[name]();
  const shipped = /^shipped-(\d+)(-always)?(-expand)?$/.exec(name);
  if (shipped) {
    const rewriter = new OfflineRewriter({ maxContextWords: Number(shipped[1]), ...(shipped[3] ? { style: 'expand' } : {}) });
    return (request) => rewriter.rewriteSync(shipped[2] ? { ...request, policy: 'always' } : request);
  }
  const match = /^([a-z]+)-(\d+)(-always)?$/.exec(name);
  if (!match || !SOURCES[match[1]]) throw new Error(`unknown variant ${name}`);
  return appendWords(SOURCES[match[1]], Number(match[2]), { gate: match[3] ? 'always' : 'auto' });
}

// ---- replay and measurement -----------------------------------------------------------

function conversationRewriter(strategy) {
  const states = new Map();
  const run = (question, state) => strategy({ question, history: state.turns.slice(-WINDOW), topics: state.topics, policy: 'auto' });
  const stateAfter = (history) => {
    const key = JSON.stringify(history.map((h) => h.user));
    let state = states.get(key);
    if (!state) {
      if (history.length === 0) state = { turns: [], topics: [] };
      else {
        const before = stateAfter(history.slice(0, -1));
        const last = history.at(-1);
        const outcome = run(last.user, before);
        const turn = { question: last.user, standaloneQuery: outcome.standaloneQuery, answer: last.assistant };
        const topics = outcome.decision === 'small_talk' ? before.topics : updateTopics(before.topics, { ordinal: history.length, ...turn });
        state = { turns: [...before.turns, turn], topics };
      }
      states.set(key, state);
    }
    return state;
  };
  return (task) => run(task.question, stateAfter(task.history));
}

const wanted = arg('variants', 'shipped').split(',');
for (const name of wanted) if (name !== 'ref') strategyFor(name);
const dump = arg('dump', '');
const dumpLines = [];
const table = [];
for (const domain of domains) {
  const db = openDatabase(path.join(root, `bench/out/mtrag/${domain}-c3000.db`), { readonly: true });
  const retriever = new Retriever(db, new OfflineEmbedder());
  if (RAW_IDF || TERMS_IDF) {
    db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, chunks_fts, row)');
    const total = db.prepare('SELECT count(*) AS n FROM chunks').get().n;
    const df = db.prepare('SELECT doc FROM temp.vocab WHERE term = ?');
    docShare = (word) => (df.get(stem(word))?.doc ?? 0) / total;
  }
  const cache = new Map();
  const embedder = new OfflineEmbedder();
  const bm25All = db.prepare('SELECT rowid AS id, bm25(chunks_fts, 4, 1) AS bm25 FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25 LIMIT ?');
  const bm25Of = db.prepare('SELECT rowid AS id, bm25(chunks_fts, 4, 1) AS bm25 FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?))');
  const chunkDoc = db.prepare('SELECT c.id AS chunkId, d.path AS documentPath FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id = ?');
  const weighted = (question, rewrite, wk, wv) => {
    const present = stems(question);
    const added = [...new Set(tokenize(rewrite, { identifiers: true }).filter((w) => !present.has(stem(w)) && !isStopword(w)))];
    const qm = buildFtsQuery(question);
    const cm = added.length ? buildFtsQuery(added.join(' ')) : null;
    const N = 100;
    const rawHits = qm ? bm25All.all(qm, N) : [];
    const ctxHits = cm ? bm25All.all(cm, N) : [];
    const score = new Map();
    for (const h of rawHits) score.set(h.id, { raw: h.bm25, ctx: undefined });
    for (const h of ctxHits) { const e = score.get(h.id) ?? { raw: undefined, ctx: undefined }; e.ctx = h.bm25; score.set(h.id, e); }
    const needRaw = [...score].filter(([, e]) => e.raw === undefined).map(([id]) => id);
    const needCtx = [...score].filter(([, e]) => e.ctx === undefined).map(([id]) => id);
    if (qm && needRaw.length) for (const h of bm25Of.all(qm, JSON.stringify(needRaw))) score.get(h.id).raw = h.bm25;
    if (cm && needCtx.length) for (const h of bm25Of.all(cm, JSON.stringify(needCtx))) score.get(h.id).ctx = h.bm25;
    if (TERMS_NORM) wk *= Math.min(1, Math.max(1, content(question).length) / Math.max(1, added.length));
    if (TERMS_IDF && Math.min(1, ...content(question).map((word) => docShare(word))) <= TERMS_IDF[0]) wk = TERMS_IDF[1];
    const keyword = [...score].map(([id, e]) => ({ id, score: (e.raw ?? 0) + wk * (e.ctx ?? 0) })).sort((a, b) => a.score - b.score).slice(0, N).map((h, i) => ({ ...h, rank: i + 1 }));
    const vq = embedder.embedOne(question);
    let v = vq;
    if (added.length && wv > 0) {
      const vc = embedder.embedOne(added.join(' '));
      v = new Float32Array(vq.length);
      let norm = 0;
      for (let i = 0; i < v.length; i++) { v[i] = vq[i] + wv * vc[i]; norm += v[i] * v[i]; }
      norm = Math.sqrt(norm) || 1;
      for (let i = 0; i < v.length; i++) v[i] /= norm;
    }
    const vectorHits = retriever.nearest(v, N).map((hit, i) => ({ id: hit.id, rank: i + 1, score: hit.distance }));
    let fused = fuse(vectorHits, keyword);
    if (TERMS_RAW > 0) {
      const rawVector = retriever.nearest(vq, N).map((hit, i) => ({ id: hit.id, rank: i + 1, score: hit.distance }));
      const rawList = fuse(rawVector, rawHits.map((h, i) => ({ id: h.id, rank: i + 1, score: h.bm25 })));
      const byId = new Map(fused.map((h) => [h.id, h.score]));
      for (const h of rawList) byId.set(h.id, (byId.get(h.id) ?? 0) + TERMS_RAW * h.score);
      fused = [...byId].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || a.id - b.id);
    }
    return fused.slice(0, 10).map((hit) => chunkDoc.get(hit.id));
  };
  const retrieve = async ({ query, secondary }) => {
    const key = `${query}\u0000${secondary ?? ''}`;
    if (!cache.has(key)) {
      if (TERMS && secondary) cache.set(key, weighted(secondary, query, TERMS[0], TERMS[1] ?? TERMS[0]));
      else cache.set(key, await retriever.search(query, { k: 10, secondary: secondary ? { query: secondary, weight: rawWeightFor(secondary) } : undefined }));
    }
    return cache.get(key);
  };
  const tasks = parseTasks(fs.readFileSync(path.join(root, `bench/out/mtrag/${domain}/tasks.jsonl`), 'utf8'), domain);
  const variants = [
    { name: 'raw', query: async (t) => t.question },
    { name: 'reference', query: async (t) => t.reference_rewrite ?? null },
  ];
  for (const name of wanted) {
    const rewrite = name === 'ref' ? (t) => ({ standaloneQuery: t.reference_rewrite ?? t.question, decision: 'rewritten' }) : conversationRewriter(strategyFor(name));
    variants.push({ name, query: async (t) => { const o = rewrite(t); return { query: o.standaloneQuery, decision: o.decision }; } });
    variants.push({
      name: `${name}+raw`,
      query: async (t) => {
        const o = rewrite(t);
        return { query: o.standaloneQuery, decision: o.decision, secondary: o.standaloneQuery !== t.question ? t.question : undefined };
      },
    });
  }
  const report = await runEval({ tasks, names: new DocumentNames(db), variants, retrieve });
  const rawDiff = report.variants[0].rewriteDiffers.recall5;
  const refDiff = report.variants[1].rewriteDiffers.recall5;
  for (const v of report.variants) {
    const gap = refDiff > rawDiff ? ((v.rewriteDiffers.recall5 - rawDiff) / (refDiff - rawDiff)) * 100 : NaN;
    table.push(`${domain.padEnd(6)} ${v.name.padEnd(24)} all ${v.overall.recall5.toFixed(3)} / ${v.overall.mrr10.toFixed(3)}  differs ${v.rewriteDiffers.recall5.toFixed(3)} / ${v.rewriteDiffers.mrr10.toFixed(3)}${Number.isNaN(gap) ? '' : `  gap ${gap.toFixed(0)}%`}${v.decisions ? `  rewritten ${v.decisions.rewritten ?? 0}` : ''}`);
  }
  if (dump) for (const r of report.results) dumpLines.push({ domain, ...r, ranked: undefined });
  db.close();
}
console.log(table.join('\n'));
if (dump) fs.writeFileSync(dump, dumpLines.map((l) => JSON.stringify(l)).join('\n') + '\n');
