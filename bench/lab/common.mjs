// Shared lab plumbing: load the benchmark (read in place from ../shared/bench, never
// copied), build FTS5 / vec0 indexes in :memory:, run queries, score them.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { scoreQuery, meanMetrics } from '../out/lib/eval/metrics.js';

export const BENCH = process.env.BENCH_DIR ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../../shared/bench');

export function loadCorpus(domain) {
  const lines = fs.readFileSync(path.join(BENCH, `corpus_${domain}.jsonl`), 'utf8').split('\n');
  const docs = [];
  for (const line of lines) {
    if (!line.trim()) continue;
    const d = JSON.parse(line);
    const text = d.text ?? '';
    const firstLine = text.replace(/^\s+/, '').split('\n')[0].trim();
    docs.push({ id: d.id, text, firstLine, rowid: docs.length + 1 });
  }
  // Document title: first line of the document's first passage (offset <= 10), when the pool has it.
  if (domain === 'cloud') {
    const titleOf = new Map();
    for (const d of docs) {
      const m = /^(.*)-(\d+)-(\d+)$/.exec(d.id);
      if (m && Number(m[2]) <= 10 && d.firstLine) titleOf.set(m[1], d.firstLine);
    }
    for (const d of docs) {
      const m = /^(.*)-(\d+)-(\d+)$/.exec(d.id);
      d.docTitle = (m && titleOf.get(m[1])) || '';
    }
  }
  return docs;
}

export function loadTasks(domain) {
  return fs
    .readFileSync(path.join(BENCH, 'retrieval_tasks.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l))
    .filter((t) => t.domain === domain)
    .map((t) => ({ id: t.task_id, raw: t.question, rewrite: t.reference_rewrite ?? t.question, relevant: t.relevant_passage_ids, turn: t.turn }));
}

export function openDb() {
  const db = new Database(':memory:');
  sqliteVec.load(db);
  return db;
}

/** Title/body split per variant: `none` = one column; `first` = first line of passage; `doc` = document title. */
export function titleText(doc, mode) {
  if (mode === 'first') return doc.firstLine ?? '';
  if (mode === 'doc') return doc.docTitle || '';
  if (mode === 'both') return [doc.docTitle, doc.firstLine].filter(Boolean).join(' \n ');
  return '';
}

export function buildFts(db, docs, { tokenize = 'unicode61', titleMode = 'none', name = 'fts' } = {}) {
  const twoCols = titleMode !== 'none';
  db.exec(
    `CREATE VIRTUAL TABLE ${name} USING fts5(${twoCols ? 'title, ' : ''}body, tokenize = "${tokenize.replace(/"/g, '""')}")`,
  );
  const ins = db.prepare(
    twoCols ? `INSERT INTO ${name}(rowid, title, body) VALUES (?, ?, ?)` : `INSERT INTO ${name}(rowid, body) VALUES (?, ?)`,
  );
  db.transaction(() => {
    for (const d of docs) {
      if (twoCols) ins.run(d.rowid, titleText(d, titleMode), d.text);
      else ins.run(d.rowid, d.text);
    }
  })();
  return { name, twoCols };
}

export function ftsSearcher(db, fts, { weights = null, depth = 100 } = {}) {
  const w = fts.twoCols ? (weights ?? [1, 1]) : [1];
  const stmt = db.prepare(
    `SELECT rowid, bm25(${fts.name}, ${w.join(', ')}) AS score FROM ${fts.name} WHERE ${fts.name} MATCH ? ORDER BY score LIMIT ${depth}`,
  );
  return (matchExpr) => {
    if (!matchExpr) return [];
    return stmt.all(matchExpr).map((r, i) => ({ id: r.rowid, rank: i + 1, score: r.score }));
  };
}

export function buildVec(db, docs, embedder, { name = 'vec', textOf = (d) => d.text } = {}) {
  db.exec(`CREATE VIRTUAL TABLE ${name} USING vec0(embedding float[${embedder.dimensions}])`);
  const ins = db.prepare(`INSERT INTO ${name}(rowid, embedding) VALUES (?, ?)`);
  const t0 = performance.now();
  let bytes = 0;
  const vecs = [];
  for (const d of docs) {
    const t = textOf(d);
    bytes += Buffer.byteLength(t);
    vecs.push(embedder.embedOne(t));
  }
  const embedMs = performance.now() - t0;
  db.transaction(() => {
    docs.forEach((d, i) => ins.run(BigInt(d.rowid), Buffer.from(vecs[i].buffer)));
  })();
  return { name, embedMs, bytes };
}

export function vecSearcher(db, vec, embedder, { depth = 100 } = {}) {
  const stmt = db.prepare(`SELECT rowid, distance FROM ${vec.name} WHERE embedding MATCH ? AND k = ${depth} ORDER BY distance`);
  return (text) => {
    const q = embedder.embedOne(text);
    return stmt.all(Buffer.from(q.buffer)).map((r, i) => ({ id: r.rowid, rank: i + 1, score: r.distance }));
  };
}

/** Runs `search(queryText) -> ranked rowids` over tasks for one query field, returns mean metrics. */
export function evaluate(tasks, docs, field, search) {
  const idOf = (rowid) => docs[rowid - 1].id;
  const per = tasks.map((t) => scoreQuery(search(t[field]).map(idOf), t.relevant));
  return meanMetrics(per);
}

export const fmt = (m) => [m.recall5, m.recall10, m.mrr10, m.ndcg10].map((x) => x.toFixed(3)).join(' / ');

const OUT = new URL('../out/lab/', import.meta.url);
/** Prints a markdown row and appends a JSON record to bench/out/lab/results.jsonl. */
export function report(variant, results, command) {
  fs.mkdirSync(OUT, { recursive: true });
  fs.appendFileSync(new URL('results.jsonl', OUT), JSON.stringify({ variant, results, command }) + '\n');
  const c = results.cloud ?? {};
  const f = results.fiqa ?? {};
  const cell = (m) => (m ? fmt(m) : 'n/a');
  console.log(`| ${variant} | ${cell(c.rewrite)} | ${cell(c.raw)} | ${cell(f.rewrite)} | ${cell(f.raw)} |`);
}
