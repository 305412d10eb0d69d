// Vector-only and hybrid variants: offline embedder features/dimensions, fusion method,
// weights, RRF k and candidate depth. Each side's top-100 list is computed once per
// configuration (FTS5 and vec0 in :memory:), then fused in JS for every fusion setting.
// Usage: node bench/lab/hybrid.mjs <group>   groups: emb, dims, fuse, depth, text
import { loadCorpus, loadTasks, openDb, buildFts, ftsSearcher, buildVec, vecSearcher, report, titleText } from './common.mjs';
import { scoreQuery, meanMetrics } from '../out/lib/eval/metrics.js';
import { buildFtsQuery } from '../out/lib/retrieve/fts-query.js';
import { fuse } from '../out/lib/retrieve/fuse.js';
import { OfflineEmbedder } from '../out/lib/providers/offline-embedder.js';

const group = process.argv[2] ?? 'emb';
const command = `node bench/lab/hybrid.mjs ${group}`;
const DOMAINS = ['cloud', 'fiqa'];
const FIELDS = ['rewrite', 'raw'];
const data = Object.fromEntries(DOMAINS.map((d) => [d, { docs: loadCorpus(d), tasks: loadTasks(d) }]));

export const FTS_BEST = { tokenize: 'porter unicode61 remove_diacritics 2', titleMode: 'none', weights: null, query: { dropStopwords: true, identifiers: true } };

const ftsCache = new Map();
/** Keyword lists per domain/field: array (per task) of [{id, rank, score}] depth 100. */
function keywordLists(domain, cfg = FTS_BEST) {
  const key = domain + JSON.stringify(cfg);
  if (ftsCache.has(key)) return ftsCache.get(key);
  const { docs, tasks } = data[domain];
  const db = openDb();
  const fts = buildFts(db, docs, { tokenize: cfg.tokenize, titleMode: domain === 'cloud' ? cfg.titleMode : 'none' });
  const search = ftsSearcher(db, fts, { weights: cfg.weights, depth: 100 });
  const out = Object.fromEntries(FIELDS.map((f) => [f, tasks.map((t) => search(buildFtsQuery(t[f], cfg.query)))]));
  db.close();
  ftsCache.set(key, out);
  return out;
}

function vectorLists(domain, embOpts, textMode = 'body') {
  const { docs, tasks } = data[domain];
  const embedder = new OfflineEmbedder(embOpts);
  const db = openDb();
  const textOf = textMode === 'body' ? (d) => d.text : (d) => `${titleText(d, textMode)}\n${d.text}`;
  const vec = buildVec(db, docs, embedder, { textOf });
  const search = vecSearcher(db, vec, embedder, { depth: 100 });
  const out = Object.fromEntries(FIELDS.map((f) => [f, tasks.map((t) => search(t[f]))]));
  db.close();
  out.mbps = vec.bytes / 1e6 / (vec.embedMs / 1000);
  return out;
}

function score(domain, lists) {
  const { docs, tasks } = data[domain];
  return meanMetrics(tasks.map((t, i) => scoreQuery(lists[i].map((h) => docs[h.id - 1].id), t.relevant)));
}

function hybridResults(vecL, kwL, fuseOpts, depth = 100) {
  const results = {};
  for (const domain of DOMAINS) {
    results[domain] = {};
    for (const f of FIELDS) {
      const fused = kwL[domain][f].map((kw, i) =>
        fuse(vecL[domain][f][i].slice(0, depth), kw.slice(0, depth), { ...fuseOpts, limit: 10 }),
      );
      results[domain][f] = score(domain, fused);
    }
  }
  return results;
}

function sideResults(lists) {
  const results = {};
  for (const domain of DOMAINS) {
    results[domain] = {};
    for (const f of FIELDS) results[domain][f] = score(domain, lists[domain][f].map((l) => l.slice(0, 10)));
  }
  return results;
}

const kw = Object.fromEntries(DOMAINS.map((d) => [d, keywordLists(d)]));
const FEATURE_SETS = {
  'words': { word: 1, stem: 0, bigram: 0, charNgrams: [], charWeight: 0, stopwordWeight: 1, sublinearTf: false },
  'words sublinear': { word: 1, stem: 0, bigram: 0, charNgrams: [], charWeight: 0, stopwordWeight: 1, sublinearTf: true },
  'words sublinear stop0.1': { word: 1, stem: 0, bigram: 0, charNgrams: [], charWeight: 0, stopwordWeight: 0.1, sublinearTf: true },
  'stems sublinear stop0.1': { word: 0, stem: 1, bigram: 0, charNgrams: [], charWeight: 0, stopwordWeight: 0.1, sublinearTf: true },
  'stems+bigram0.5': { word: 0, stem: 1, bigram: 0.5, charNgrams: [], charWeight: 0, stopwordWeight: 0.1, sublinearTf: true },
  'stems+bigram1': { word: 0, stem: 1, bigram: 1, charNgrams: [], charWeight: 0, stopwordWeight: 0.1, sublinearTf: true },
  'words+stems+bigram0.5': { word: 0.5, stem: 1, bigram: 0.5, charNgrams: [], charWeight: 0, stopwordWeight: 0.1, sublinearTf: true },
  'stems+bigram0.5+char345x0.5': { word: 0, stem: 1, bigram: 0.5, charNgrams: [3, 4, 5], charWeight: 0.5, stopwordWeight: 0.1, sublinearTf: true },
  'stems+bigram0.5+char4x0.5': { word: 0, stem: 1, bigram: 0.5, charNgrams: [4], charWeight: 0.5, stopwordWeight: 0.1, sublinearTf: true },
  'stems+bigram0.5+char3x1': { word: 0, stem: 1, bigram: 0.5, charNgrams: [3], charWeight: 1, stopwordWeight: 0.1, sublinearTf: true },
};

if (group === 'emb') {
  const r = sideResults(kw);
  report('keyword side alone (fts porter rd2, OR minus stopwords, identifiers)', r, command);
  for (const [name, features] of Object.entries(FEATURE_SETS)) {
    const vl = Object.fromEntries(DOMAINS.map((d) => [d, vectorLists(d, { dimensions: 384, features })]));
    report(`vector only 384d: ${name} (${vl.cloud.mbps.toFixed(0)} MB/s)`, sideResults(vl), command);
    report(`hybrid RRF k=60 1:1, 384d ${name}`, hybridResults(vl, kw, { method: 'rrf', k: 60 }), command);
  }
}
const featuresArg = process.env.FEATURES ? JSON.parse(process.env.FEATURES) : undefined;
if (group === 'dims') {
  for (const dimensions of [256, 384, 512, 768, 1024]) {
    const vl = Object.fromEntries(DOMAINS.map((d) => [d, vectorLists(d, { dimensions, features: featuresArg })]));
    report(`vector only ${dimensions}d default features`, sideResults(vl), command);
    report(`hybrid RRF k=60 1:1, ${dimensions}d default features`, hybridResults(vl, kw, { method: 'rrf', k: 60 }), command);
  }
}
if (group === 'fuse' || group === 'depth') {
  const dimensions = Number(process.env.DIMS ?? 384);
  const vl = Object.fromEntries(DOMAINS.map((d) => [d, vectorLists(d, { dimensions, features: featuresArg })]));
  if (group === 'fuse') {
    for (const k of [10, 30, 60, 100]) {
      for (const [vw, kw_] of [[1, 1], [0.5, 1], [0.75, 1], [1, 0.75], [1.125, 1]]) {
        report(`hybrid RRF k=${k} vector:keyword ${vw}:${kw_}, ${dimensions}d`, hybridResults(vl, kw, { method: 'rrf', k, vectorWeight: vw, keywordWeight: kw_ }), command);
      }
    }
    for (const [vw, kw_] of [[1, 1], [0.5, 1], [1, 0.5], [0.75, 1]]) {
      report(`hybrid min-max score sum vector:keyword ${vw}:${kw_}, ${dimensions}d`, hybridResults(vl, kw, { method: 'score', vectorWeight: vw, keywordWeight: kw_ }), command);
    }
  } else {
    const fo = process.env.FUSE ? JSON.parse(process.env.FUSE) : { method: 'rrf', k: 60 };
    for (const depth of [10, 20, 40, 100]) {
      report(`hybrid ${JSON.stringify(fo)} depth ${depth} per side, ${dimensions}d`, hybridResults(vl, kw, fo, depth), command);
    }
  }
}
if (group === 'final') {
  // Recommended keyword side (title column = document title + first line, bm25 weights 4:1)
  // with the embedder given "title \n body", at 384 and 768 dimensions.
  const kwT = Object.fromEntries(DOMAINS.map((d) => [d, keywordLists(d, { ...FTS_BEST, titleMode: 'both', weights: [4, 1] })]));
  report('keyword side alone, title=both 4:1', sideResults(kwT), command);
  for (const dimensions of [384, 768]) {
    const vl = Object.fromEntries(DOMAINS.map((d) => [d, vectorLists(d, { dimensions, features: featuresArg }, 'both')]));
    report(`vector only ${dimensions}d, text = title + body`, sideResults(vl), command);
    for (const fo of [
      { method: 'rrf', k: 60 },
      { method: 'rrf', k: 30 },
      { method: 'rrf', k: 60, vectorWeight: 0.5 },
      { method: 'rrf', k: 10, vectorWeight: 0.5 },
      { method: 'score', vectorWeight: 0.5 },
      { method: 'score', vectorWeight: 0.3 },
    ]) {
      report(`hybrid ${JSON.stringify(fo)}, ${dimensions}d, title=both 4:1, embed title+body`, hybridResults(vl, kwT, fo), command);
    }
  }
}
