// Two `ragline ingest`s started at the same moment on a database file that does
// not exist yet, many times over: counts how each pair ended and every error
// message seen, and checks the database after each pair (integrity, FTS rows,
// vectors and chunk counts agree; every fixture document is there).
//   node bench/reliability/fresh-pairs.mjs           200 pairs, one at a time
//   PAIRS=400 PARALLEL=3 node bench/reliability/fresh-pairs.mjs   3 pairs at a time, each on its own file
// Build first (npx tsc -p .). Exits 1 if any pair ended in a way the test in
// test/store.test.ts ('started together on a new database') does not accept.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const sqliteVec = require('sqlite-vec');

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const BIN = path.join(ROOT, 'bin/ragline.js');
const DOCS = path.join(ROOT, 'fixtures/docs');
const PAIRS = Number(process.env.PAIRS ?? 200);
// Pairs running at once (each on its own file): more than 1 loads the machine as a test run does.
const PARALLEL = Number(process.env.PARALLEL ?? 1);

// Both normally finish (the second waits for the first); the two refusals still
// accepted (exit 1), as with --no-wait or a wait that runs out:
const ANOTHER = /^error: Another ingest \(pid \d+, started [^)]+\) is writing to this database\.$/m;
const CHANGED = /^error: Another ingest changed the documents of this folder while this one was reading them; nothing was written\.$/m;

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-pairs-'));
// Nothing of this machine's settings: no XDG variables, so config and data resolve under HOME.
const env = {
  PATH: process.env.PATH,
  HOME: home,
  NO_COLOR: '1',
  RAGLINE_PROVIDER: 'offline',
  ...(process.env.RAGLINE_DEBUG ? { RAGLINE_DEBUG: process.env.RAGLINE_DEBUG } : {}),
};

function run(db) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, '--db', db, 'ingest', DOCS], { env, cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

function health(file) {
  const db = new Database(file);
  sqliteVec.load(db);
  try {
    const one = (sql) => db.prepare(sql).pluck().get();
    const chunks = one('SELECT count(*) FROM chunks');
    const ok =
      db.pragma('integrity_check', { simple: true }) === 'ok' &&
      one('SELECT count(*) FROM chunks_fts') === chunks &&
      one('SELECT count(*) FROM vec_chunks') === chunks &&
      one('SELECT coalesce(sum(chunk_count), 0) FROM documents') === chunks;
    return { ok, documents: one('SELECT count(*) FROM documents') };
  } catch (err) {
    return { ok: false, error: err.message };
  } finally {
    db.close();
  }
}

const outcomes = new Map(); // exit codes "a/b" -> pairs
const messages = new Map(); // first error line -> processes
let failedPairs = 0;
let damaged = 0;
let expectedDocuments;
const started = Date.now();
async function pair(i) {
  const db = path.join(home, `pair-${i}.db`);
  const results = await Promise.all([run(db), run(db)]);
  const key = results.map((r) => r.code).join('/');
  outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  let accepted = results.some((r) => r.code === 0);
  for (const r of results) {
    if (r.code === 0) continue;
    const line = (r.stderr.split('\n').find((l) => l.startsWith('error:')) ?? r.stderr.trim().split('\n')[0] ?? '')
      .replace(/pid \d+, started [^)]+/, 'pid N, started T')
      .replaceAll(home, '$HOME')
      .replace(/pair-\d+\.db/g, 'pair-N.db');
    messages.set(line, (messages.get(line) ?? 0) + 1);
    if (r.code !== 1 || !(ANOTHER.test(r.stderr) || CHANGED.test(r.stderr))) accepted = false;
  }
  const h = health(db);
  expectedDocuments ??= h.documents;
  if (!h.ok || h.documents !== expectedDocuments) {
    damaged++;
    console.log(`pair ${i}: database not as expected: ${JSON.stringify(h)}`);
  }
  if (!accepted) {
    failedPairs++;
    console.log(`pair ${i}: ${key}\n${results.map((r) => r.stderr.trim()).join('\n---\n')}`);
  }
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(db + suffix, { force: true });
}
let next = 0;
await Promise.all(
  Array.from({ length: PARALLEL }, async () => {
    while (next < PAIRS) await pair(next++);
  }),
);
console.log(`${PAIRS} pairs (${PARALLEL} at a time) in ${((Date.now() - started) / 1000).toFixed(0)} s; exit codes: ${[...outcomes].map(([k, n]) => `${k} x${n}`).join(', ')}`);
console.log('errors:');
for (const [line, n] of [...messages].sort((a, b) => b[1] - a[1])) console.log(`  ${n} x ${line}`);
console.log(`pairs the test would fail: ${failedPairs}; databases not intact or incomplete: ${damaged} (${expectedDocuments} documents expected)`);
fs.rmSync(home, { recursive: true, force: true });
process.exit(failedPairs > 0 || damaged > 0 ? 1 : 0);
