// What checking a database before the first write would cost at 100k chunks:
// times the checks openDatabase runs (application id, user_version, the schema
// read) against PRAGMA quick_check and integrity_check, on a database built by
// the real `ragline ingest` from generated Markdown (text, FTS rows, vectors).
//   node bench/reliability/quick-check.mjs            100k chunks (build once, ~1-2 min)
//   CHUNKS=20000 node bench/reliability/quick-check.mjs
// The database and its documents go to bench/out/quick-check/ (gitignored).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const sqliteVec = require('sqlite-vec');

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const CHUNKS = Number(process.env.CHUNKS ?? 100_000);
const OUT = path.join(ROOT, 'bench/out/quick-check', String(CHUNKS));
const DOCS = path.join(OUT, 'docs');
const DB = path.join(OUT, 'ragline.db');
const PER_FILE = 20; // sections of ~900 characters: one chunk each

if (!fs.existsSync(DB)) {
  fs.mkdirSync(DOCS, { recursive: true });
  const words = 'index query vector chunk sqlite write ahead log page header schema table journal checkpoint cursor btree freelist overflow'.split(' ');
  let seed = 7;
  const next = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  for (let f = 0; f < CHUNKS / PER_FILE; f++) {
    const sections = [];
    for (let s = 0; s < PER_FILE; s++) {
      const text = Array.from({ length: 120 }, () => words[Math.floor(next() * words.length)]).join(' ');
      sections.push(`## Section ${s}\n\n${text} f${f}s${s}.\n`);
    }
    fs.writeFileSync(path.join(DOCS, `doc-${f}.md`), `# Document ${f}\n\n${sections.join('\n')}`);
  }
  const started = Date.now();
  execFileSync(process.execPath, [path.join(ROOT, 'bin/ragline.js'), '--db', DB, 'ingest', DOCS, '--chunk-size', '1000'], {
    stdio: 'inherit',
    env: { ...process.env, HOME: OUT, XDG_DATA_HOME: OUT, XDG_CONFIG_HOME: OUT },
  });
  console.log(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

const db = new Database(DB, { readonly: true });
sqliteVec.load(db);
const chunks = db.prepare('SELECT count(*) FROM chunks').pluck().get();
const size = fs.statSync(DB).size + (fs.existsSync(DB + '-wal') ? fs.statSync(DB + '-wal').size : 0);
console.log(`${chunks} chunks, ${(size / 1024 / 1024).toFixed(1)} MB`);

function time(label, fn, runs = 3) {
  const ms = [];
  let result;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    result = fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  console.log(`${label}: median ${ms[Math.floor(runs / 2)].toFixed(1)} ms (min ${ms[0].toFixed(1)}, max ${ms[runs - 1].toFixed(1)}) -> ${JSON.stringify(result)}`);
}

time('header + schema check (application_id, user_version, sqlite_master)', () => {
  const id = db.pragma('application_id', { simple: true });
  const version = db.pragma('user_version', { simple: true });
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
  return { id, version, tables: tables.length };
}, 5);
time('PRAGMA quick_check', () => db.pragma('quick_check', { simple: true }));
time('PRAGMA integrity_check', () => db.pragma('integrity_check', { simple: true }), 1);
db.close();
