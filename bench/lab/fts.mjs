// FTS5-only variants: tokenizer, query building, title column and its bm25 weight.
// Usage: node bench/lab/fts.mjs [group]   groups: tok, query, title, all (default all)
import { loadCorpus, loadTasks, openDb, buildFts, ftsSearcher, evaluate, report } from './common.mjs';
import { buildFtsQuery } from '../out/lib/retrieve/fts-query.js';

const group = process.argv[2] ?? 'all';
const command = `node bench/lab/fts.mjs ${group}`;
const data = Object.fromEntries(['cloud', 'fiqa'].map((d) => [d, { docs: loadCorpus(d), tasks: loadTasks(d) }]));

function run(variant, { tokenize, titleMode = 'none', weights = null, query = {} }, domains = ['cloud', 'fiqa']) {
  const results = {};
  for (const domain of domains) {
    const { docs, tasks } = data[domain];
    const db = openDb();
    const fts = buildFts(db, docs, { tokenize, titleMode: domain === 'cloud' ? titleMode : 'none' });
    const search = ftsSearcher(db, fts, { weights, depth: 10 });
    const q = (text) => search(buildFtsQuery(text, query)).map((h) => h.id);
    results[domain] = { rewrite: evaluate(tasks, docs, 'rewrite', q), raw: evaluate(tasks, docs, 'raw', q) };
    db.close();
  }
  report(variant, results, command);
}

const U = 'unicode61';
const U2 = 'unicode61 remove_diacritics 2';
const P2 = 'porter unicode61 remove_diacritics 2';
const PT = "porter unicode61 remove_diacritics 2 tokenchars '-_.'";
const plain = { dropStopwords: false, identifiers: false };
const best = { dropStopwords: true, identifiers: false };

if (group === 'tok' || group === 'all') {
  run('fts unicode61, OR all words', { tokenize: U, query: plain });
  run('fts unicode61 rd2, OR all words', { tokenize: U2, query: plain });
  run('fts porter unicode61 rd2, OR all words', { tokenize: P2, query: plain });
  run("fts porter unicode61 rd2 tokenchars '-_.', OR all words (identifiers kept)", { tokenize: PT, query: { dropStopwords: false, identifiers: true } });
}
if (group === 'query' || group === 'all') {
  run('fts porter rd2, OR minus stopwords', { tokenize: P2, query: best });
  run('fts porter rd2, OR minus stopwords, identifiers quoted as phrases', { tokenize: P2, query: { dropStopwords: true, identifiers: true } });
  run('fts porter rd2, implicit AND minus stopwords', { tokenize: P2, query: { ...best, operator: 'AND' } });
  run('fts unicode61 rd2, OR minus stopwords', { tokenize: U2, query: best });
}
if (group === 'title' || group === 'all') {
  for (const titleMode of ['first', 'doc', 'both']) {
    for (const w of [1, 2, 4]) {
      run(`fts porter rd2, OR minus stopwords, title=${titleMode} weight ${w}:1`, { tokenize: P2, titleMode, weights: [w, 1], query: best }, ['cloud']);
    }
  }
}
