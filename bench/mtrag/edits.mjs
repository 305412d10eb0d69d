#!/usr/bin/env node
// MTRAG retrieval after incremental re-ingests that replaced chunks, against a fresh
// ingest of the same files: what the keyword index's totals (which a contentless FTS5
// table never lowers on a delete) do to R@5. Copies a domain's passages (prepared by
// bench/mtrag/run.mjs under bench/out/mtrag) to bench/out/mtrag-edits, ingests them,
// then for each of R rounds adds a newline to a share of the files (their text, and
// so their chunks' text, stays the same, but each such file is re-chunked and its
// chunks written again) and re-ingests; then `ragline eval` on that database and on
// a fresh ingest of the same files. `--bin` runs another build of the CLI (an older
// commit's, to measure without a change). Skips when the passages are absent.
//
//   node bench/mtrag/edits.mjs [--domain fiqa] [--rounds 3] [--share 0.2] [--variants ragline+raw] [--bin bin/ragline.js]

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { arg, option, root, seededRandom } from '../turn/common.mjs';
const domain = option('domain', 'fiqa');
const rounds = arg('rounds', 3);
const share = arg('share', 0.2);
const variants = option('variants', 'ragline+raw');
const bin = path.resolve(option('bin', path.join(root, 'bin/ragline.js')));
const prepared = path.join(root, 'bench/out/mtrag', domain);
if (!fs.existsSync(path.join(prepared, 'docs')) || !fs.existsSync(path.join(prepared, 'tasks.jsonl'))) {
  console.log(`skipped: run bench/mtrag/run.mjs first (no ${path.relative(root, prepared)}/docs)`);
  process.exit(0);
}

const out = path.join(root, 'bench/out/mtrag-edits', domain);
const docs = path.join(out, 'docs');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
fs.cpSync(path.join(prepared, 'docs'), docs, { recursive: true });

const env = { ...process.env, RAGLINE_PROVIDER: 'offline', NO_COLOR: '1' };
const ragline = (args) => {
  const started = performance.now();
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env, maxBuffer: 1 << 28 });
  if (result.status !== 0) throw new Error(`ragline ${args.join(' ')}: ${result.stderr}`);
  return { stdout: result.stdout, seconds: (performance.now() - started) / 1000 };
};
const totals = (file) => {
  const db = new Database(file, { readonly: true });
  try {
    const block = db.prepare('SELECT block FROM chunks_fts_data WHERE id = 1').pluck().get();
    let rows = 0;
    for (let at = 0; at < block.length; at++) {
      rows = rows * 128 + (block[at] & 0x7f);
      if (block[at] < 0x80) break;
    }
    return { rows, chunks: db.prepare('SELECT count(*) FROM chunks').pluck().get() };
  } finally {
    db.close();
  }
};

const random = seededRandom(11);

const edited = path.join(out, 'edited.db');
ragline(['--db', edited, 'ingest', docs, '--json']);
const files = fs.readdirSync(docs).sort();
const reingests = [];
for (let round = 1; round <= rounds; round++) {
  for (const file of files) if (random() < share) fs.appendFileSync(path.join(docs, file), '\n');
  reingests.push(ragline(['--db', edited, 'ingest', docs, '--json']).seconds);
}
const fresh = path.join(out, 'fresh.db');
ragline(['--db', fresh, 'ingest', docs, '--json']);

const evaluate = (db) => {
  const result = JSON.parse(ragline(['--db', db, 'eval', path.join(prepared, 'tasks.jsonl'), '--variants', variants, '--json']).stdout);
  return result.variants.map((v) => ({ name: v.name, ...v.overall }));
};
const a = totals(edited);
const f = (x) => x.toFixed(3);
console.log(`${domain}: ${rounds} rounds, ${share * 100}% of ${files.length} files re-written each, ${option('bin', 'bin/ragline.js')}`);
console.log(`re-ingest s: ${reingests.map((s) => s.toFixed(2)).join(', ')}; rows in totals ${a.rows} for ${a.chunks} chunks (${(((a.rows - a.chunks) / a.chunks) * 100).toFixed(0)}% over)`);
console.log('| index | variant | n | R@5 | R@10 | MRR@10 | nDCG@10 |');
console.log('|---|---|---|---|---|---|---|');
for (const [label, db] of [['after the edits', edited], ['fresh', fresh]]) {
  for (const m of evaluate(db)) console.log(`| ${label} | ${m.name} | ${m.n} | ${f(m.recall5)} | ${f(m.recall10)} | ${f(m.mrr10)} | ${f(m.ndcg10)} |`);
}
