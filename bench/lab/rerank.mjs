// Second-stage and query-side experiments on the shipped hybrid retriever, against the
// real ingested databases (bench/out/{cloud,fiqa}.db, default settings) and the eval task
// files. Needs `npx tsc -p tsconfig.json` (imports dist/).
//
//   node bench/lab/rerank.mjs <experiment> [domain...]
//
// Every variant starts from the shipped pipeline (vector KNN 100 + FTS5 bm25 100, score
// fusion 0.5:1) and changes one thing: the FTS5 MATCH expression, or a rerank of the
// fused top N with features computed in JS from the candidate chunks' text.
import fs from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../../dist/store/db.js';
import { OfflineEmbedder } from '../../dist/providers/offline-embedder.js';
import { Vec0Search } from '../../dist/retrieve/vec0.js';
import { fuse } from '../../dist/retrieve/fuse.js';
import { buildFtsQuery, quoteFtsToken } from '../../dist/retrieve/fts-query.js';
import { tokenize, stem, STOPWORDS } from '../../dist/text/index.js';
import { scoreQuery, meanMetrics } from '../../dist/eval/metrics.js';

const TASKS = process.env.TASKS_DIR ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), '../out/mtrag');
const DBS = process.env.DB_DIR ?? path.resolve('bench/out');

export function loadTasks(domain) {
  return fs
    .readFileSync(path.join(TASKS, domain, 'tasks.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

export class Lab {
  constructor(domain) {
    this.domain = domain;
    this.db = openDatabase(path.join(DBS, `${domain}.db`), { readonly: true });
    this.embedder = new OfflineEmbedder();
    this.tasks = loadTasks(domain);
    this.chunks = new Map();
    const rows = this.db
      .prepare(
        `SELECT c.id, d.path, d.title, c.heading, c.text FROM chunks c JOIN documents d ON d.id = c.document_id`,
      )
      .all();
    for (const r of rows) {
      const stemName = path.posix.basename(r.path).replace(/\.[^.]*$/, '');
      this.chunks.set(r.id, { ...r, name: stemName });
    }
    this.vecCache = new Map();
    this.kwStatements = new Map();
    this.nChunks = rows.length;
    this.dfCache = new Map();
    this.dfStmt = null;
  }

  async vector(query) {
    let v = this.vecCache.get(query);
    if (!v) {
      const [vec] = await this.embedder.embed([query], undefined, 'query');
      v = (this.vec0 ??= new Vec0Search(this.db)).begin(vec, 100)().map((h, i) => ({ id: h.id, rank: i + 1, score: h.distance }));
      this.vecCache.set(query, v);
    }
    return v;
  }

  keyword(match, n = 100, weights = [4, 1]) {
    if (!match) return [];
    const key = weights.join(',');
    let st = this.kwStatements.get(key);
    if (!st) {
      st = this.db.prepare(
        `SELECT rowid AS id, bm25(chunks_fts, ${weights.join(', ')}) AS bm25 FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25 LIMIT ?`,
      );
      this.kwStatements.set(key, st);
    }
    return st.all(match, n).map((r, i) => ({ id: r.id, rank: i + 1, score: r.bm25 }));
  }

  /** bm25 of `match` for the given rowids only. */
  keywordFor(match, ids, weights = [4, 1]) {
    if (!ids.length) return [];
    this.kwForStmt ??= this.db.prepare(
      `SELECT rowid AS id, bm25(chunks_fts, ${weights.join(', ')}) AS score FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?))`,
    );
    return this.kwForStmt.all(match, JSON.stringify(ids));
  }

  /** Number of chunks containing a stem (any column), from fts5vocab-like count via MATCH. */
  df(term) {
    let d = this.dfCache.get(term);
    if (d === undefined) {
      this.dfStmt ??= this.db.prepare('SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ?');
      d = this.dfStmt.get(quoteFtsToken(term)).n;
      this.dfCache.set(term, d);
    }
    return d;
  }

  /**
   * Runs a variant over every task for both query variants.
   * variant = { match?(query) -> string, rerank?(query, fused, lab) -> fused, fuseOptions? }
   */
  async run(variant) {
    const out = {};
    for (const which of ['reference', 'raw']) {
      const per = [];
      for (const t of this.tasks) {
        const q = which === 'raw' ? t.question : (t.reference_rewrite ?? t.question);
        const vec = await this.vector(q);
        const match = variant.match ? variant.match(q) : buildFtsQuery(q);
        const kw = variant.keywordHits ? variant.keywordHits(q, this) : this.keyword(match, variant.kwDepth ?? 100, variant.weights ?? [4, 1]);
        let fused = fuse(vec, kw, variant.fuseOptions ?? {});
        if (variant.rerank) fused = variant.rerank(q, fused, this);
        const ranked = [];
        const seen = new Set();
        for (const h of fused) {
          const c = this.chunks.get(h.id);
          if (!c) continue;
          if (seen.has(c.name)) continue;
          seen.add(c.name);
          ranked.push(c.name);
          if (ranked.length >= 10) break;
        }
        per.push(scoreQuery(ranked, t.relevant));
      }
      out[which] = meanMetrics(per);
    }
    return out;
  }
}

export const fmt = (m) => [m.recall5, m.recall10, m.mrr10, m.ndcg10].map((x) => x.toFixed(3)).join(' / ');

export async function report(labs, name, variant) {
  const cells = [];
  const json = { name };
  for (const lab of labs) {
    const r = await lab.run(variant);
    cells.push(fmt(r.reference), fmt(r.raw));
    json[lab.domain] = r;
  }
  const line = `| ${name} | ${cells.join(' | ')} |`;
  console.log(line);
  fs.mkdirSync('bench/out/lab', { recursive: true });
  fs.appendFileSync('bench/out/lab/rerank.jsonl', JSON.stringify(json) + '\n');
  return json;
}

// ---------- query helpers ----------

/** Content terms of a query, in order, as FTS5 sees them (identifiers split like unicode61). */
export function contentTerms(query) {
  const toks = tokenize(query);
  const content = toks.filter((t) => !STOPWORDS.has(t));
  return content.length ? content : toks;
}

export { buildFtsQuery, quoteFtsToken, tokenize, stem, STOPWORDS };
