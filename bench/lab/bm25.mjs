// JS BM25 (own stats: Porter stems, tunable k1/b, optional title field as BM25F) and
// RM3 pseudo-relevance feedback, to see what FTS5's fixed k1=1.2/b=0.75 leaves on the table.
// Usage: node bench/lab/bm25.mjs <group>   groups: params, rm3, title, ftsprf
import { loadCorpus, loadTasks, report, titleText, openDb, buildFts, ftsSearcher } from './common.mjs';
import { scoreQuery, meanMetrics } from '../out/lib/eval/metrics.js';
import { tokenize, stem, STOPWORDS } from '../out/lib/text/index.js';
import { buildFtsQuery } from '../out/lib/retrieve/fts-query.js';

const group = process.argv[2] ?? 'params';
const command = `node bench/lab/bm25.mjs ${group}`;
const DOMAINS = ['cloud', 'fiqa'];
const FIELDS = ['rewrite', 'raw'];
const data = Object.fromEntries(DOMAINS.map((d) => [d, { docs: loadCorpus(d), tasks: loadTasks(d) }]));

const stems = (text) => tokenize(text).map(stem);
const contentStems = (text) => tokenize(text).filter((t) => !STOPWORDS.has(t)).map(stem);

/** Inverted index with per-field tf; title tf multiplied by titleWeight (BM25F-style). */
function buildIndex(docs, { titleMode = 'none', titleWeight = 1 } = {}) {
  const postings = new Map();
  const lens = new Float64Array(docs.length);
  const docTf = [];
  docs.forEach((d, i) => {
    const tf = new Map();
    for (const s of stems(d.text)) tf.set(s, (tf.get(s) ?? 0) + 1);
    let len = 0;
    for (const v of tf.values()) len += v;
    if (titleMode !== 'none') {
      for (const s of stems(titleText(d, titleMode))) {
        tf.set(s, (tf.get(s) ?? 0) + titleWeight);
        len += titleWeight;
      }
    }
    lens[i] = len;
    docTf.push(tf);
    for (const [t, c] of tf) {
      let p = postings.get(t);
      if (!p) postings.set(t, (p = []));
      p.push(i, c);
    }
  });
  const avgdl = lens.reduce((a, b) => a + b, 0) / docs.length;
  return { postings, lens, avgdl, N: docs.length, docTf };
}

function idf(ix, t) {
  const p = ix.postings.get(t);
  const n = p ? p.length / 2 : 0;
  return Math.log(1 + (ix.N - n + 0.5) / (n + 0.5));
}

/** query: Map stem -> weight. Returns [{idx, score}] top `depth`. */
function search(ix, query, { k1 = 1.2, b = 0.75, depth = 100 } = {}) {
  const scores = new Float64Array(ix.N);
  const hit = [];
  for (const [t, qw] of query) {
    const p = ix.postings.get(t);
    if (!p) continue;
    const w = qw * idf(ix, t);
    for (let j = 0; j < p.length; j += 2) {
      const i = p[j];
      const tf = p[j + 1];
      if (scores[i] === 0) hit.push(i);
      scores[i] += (w * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * ix.lens[i]) / ix.avgdl));
    }
  }
  hit.sort((x, y) => scores[y] - scores[x] || x - y);
  return hit.slice(0, depth).map((i) => ({ idx: i, score: scores[i] }));
}

function queryOf(text) {
  const q = new Map();
  let terms = contentStems(text);
  if (terms.length === 0) terms = stems(text);
  for (const t of terms) q.set(t, (q.get(t) ?? 0) + 1);
  return q;
}

function rm3(ix, query, first, { fbDocs = 10, fbTerms = 10, alpha = 0.5 } = {}) {
  const top = first.slice(0, fbDocs);
  if (top.length === 0) return query;
  const maxS = Math.max(...top.map((h) => h.score));
  const rel = new Map();
  let z = 0;
  for (const h of top) {
    const dw = Math.exp(h.score - maxS); // posterior-ish doc weight
    z += dw;
    const tf = ix.docTf[h.idx];
    const len = ix.lens[h.idx];
    for (const [t, c] of tf) {
      if (STOPWORDS.has(t) || t.length < 2 || /^\d+$/.test(t)) continue;
      rel.set(t, (rel.get(t) ?? 0) + (dw * c) / len);
    }
  }
  const expansion = [...rel.entries()].sort((a, b) => b[1] - a[1]).slice(0, fbTerms);
  const es = expansion.reduce((s, [, w]) => s + w, 0) || 1;
  let qs = 0;
  for (const v of query.values()) qs += v;
  const out = new Map();
  for (const [t, v] of query) out.set(t, (alpha * v) / qs);
  for (const [t, w] of expansion) out.set(t, (out.get(t) ?? 0) + ((1 - alpha) * w) / es);
  return out;
}

function evalAll(variant, domains, runQuery) {
  const results = {};
  for (const domain of domains) {
    const { docs, tasks } = data[domain];
    const ix = getIndex(domain);
    results[domain] = {};
    for (const f of FIELDS) {
      results[domain][f] = meanMetrics(tasks.map((t) => scoreQuery(runQuery(ix, t[f], domain).slice(0, 10).map((h) => docs[h.idx].id), t.relevant)));
    }
  }
  report(variant, results, command);
}

let indexOpts = { titleMode: 'none', titleWeight: 1 };
const ixCache = new Map();
function getIndex(domain) {
  const opts = domain === 'cloud' ? indexOpts : { titleMode: 'none' };
  const key = domain + JSON.stringify(opts);
  if (!ixCache.has(key)) ixCache.set(key, buildIndex(data[domain].docs, opts));
  return ixCache.get(key);
}

if (group === 'params') {
  for (const k1 of [0.6, 0.9, 1.2, 1.6, 2.0]) {
    for (const b of [0.3, 0.5, 0.75, 0.9]) {
      evalAll(`js bm25 stems, minus stopwords, k1=${k1} b=${b}`, DOMAINS, (ix, text) => search(ix, queryOf(text), { k1, b }));
    }
  }
}
if (group === 'title') {
  for (const titleMode of ['first', 'doc', 'both']) {
    for (const titleWeight of [1, 2, 3, 5]) {
      indexOpts = { titleMode, titleWeight };
      evalAll(`js bm25F title=${titleMode} x${titleWeight}, k1=1.2 b=0.75`, ['cloud'], (ix, text) => search(ix, queryOf(text)));
    }
  }
}
if (group === 'rm3') {
  const k1 = Number(process.env.K1 ?? 1.2);
  const b = Number(process.env.B ?? 0.75);
  if (process.env.TITLE) indexOpts = JSON.parse(process.env.TITLE);
  evalAll(`js bm25 k1=${k1} b=${b} ${JSON.stringify(indexOpts)} no PRF`, DOMAINS, (ix, text) => search(ix, queryOf(text), { k1, b }));
  for (const fbDocs of [3, 5, 10]) {
    for (const fbTerms of [5, 10, 20]) {
      for (const alpha of [0.5, 0.7, 0.85]) {
        evalAll(`js bm25 k1=${k1} b=${b} + RM3 docs=${fbDocs} terms=${fbTerms} alpha=${alpha}`, DOMAINS, (ix, text) => {
          const q = queryOf(text);
          const first = search(ix, q, { k1, b });
          return search(ix, rm3(ix, q, first, { fbDocs, fbTerms, alpha }), { k1, b });
        });
      }
    }
  }
}
