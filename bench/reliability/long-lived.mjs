// A long-lived connection (a chat, `ragline mcp`, a program holding a Workspace)
// searching and chatting while another process rebuilds or rewrites the index:
// `ingest --reindex` (vec_chunks dropped and created again, FTS5 'delete-all'),
// an ingest of changed files, an ingest that rewrites the keyword index (its text
// version set back first), and a process creating and dropping a table in a loop
// (schema changes only). Counts every error by message (a chat turn that fails
// counts its `error` event and its `failed` status), searches that came back short
// (expected while a reindex has emptied the index), and after each child: whether
// every workspace answers as a new connection does (same chunk ids; the in-memory
// copies loaded and holding the chunks there are), and in how many rounds the
// keyword index counts exactly the live chunks (`keywordsWhole`: it was rewritten).
//   node bench/reliability/long-lived.mjs                 ROUNDS=20 per mode, concurrent
//   ROUNDS=50 MODES=reindex,churn SEQUENTIAL=1 node bench/reliability/long-lived.mjs
// SEQUENTIAL=1: search once before the child and once after it, nothing while it runs.
// DOCS=synthetic: 400 generated files instead of fixtures/docs (a longer ingest).
// Build first (npx tsc -p .). Prints one JSON summary per mode; exits 1 on any error
// or mismatch.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Chat, openWorkspace } from '../../dist/app/index.js';
import { parseKeywordTotals } from '../../dist/store/documents.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const BIN = path.join(ROOT, 'bin/ragline.js');
const ROUNDS = Number(process.env.ROUNDS ?? 20);
const MODES = (process.env.MODES ?? 'reindex,change,keywords,churn').split(',');
const SEQUENTIAL = process.env.SEQUENTIAL === '1';
const K = 5;
const QUERIES = ['How do I rotate an API key?', 'webhook signature header', 'retry backoff schedule', 'install the CLI', 'relay workflows plans'];
const QUESTIONS = ['How do I verify a webhook signature?', 'does it expire?', 'How are retries scheduled?', 'can I change that?'];

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-long-lived-'));
const env = { PATH: process.env.PATH, HOME: home, NO_COLOR: '1', RAGLINE_PROVIDER: 'offline' };
const docs = path.join(home, 'docs');
const dbFile = path.join(home, 'ragline.db');
if (process.env.DOCS === 'synthetic') {
  fs.mkdirSync(docs);
  for (let i = 0; i < 400; i++) {
    const parts = Array.from({ length: 12 }, (_, p) => `## Part ${p}\n\nParagraph ${p} of document ${i} covers topic-${(i * 7 + p) % 97}, webhook signature and widget-${i % 13}.\n`);
    fs.writeFileSync(path.join(docs, `doc-${i}.md`), `# Document ${i}\n\n${parts.join('\n')}`);
  }
} else fs.cpSync(path.join(ROOT, 'fixtures/docs'), docs, { recursive: true });

function run(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env, cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr: stderr.trim() }));
  });
}
const ingest = (...flags) => run([BIN, '--db', dbFile, 'ingest', docs, ...flags]);

/** Creates and drops a table in a loop for `ms`: schema changes and nothing else. */
const churn = (ms) =>
  run([
    '-e',
    `const D = require('better-sqlite3'); const db = new D(${JSON.stringify(dbFile)}); db.pragma('busy_timeout = 10000');
     const end = Date.now() + ${ms}; while (Date.now() < end) { db.exec('CREATE TABLE churn (x)'); db.exec('DROP TABLE churn'); }`,
  ]);

/** Sets the keyword index's text version back, so the next ingest rewrites it (rewriteKeywordIndex). */
function ageKeywordIndex() {
  const db = new Database(dbFile);
  db.pragma('busy_timeout = 10000');
  const raw = db.prepare("SELECT value FROM meta WHERE key = 'index.fingerprint'").pluck().get();
  db.prepare("UPDATE meta SET value = ? WHERE key = 'index.fingerprint'").run(JSON.stringify({ ...JSON.parse(raw), text: 2 }));
  db.close();
}

let edit = 0;
/** Changes two files, adds one and removes the one added before. */
function changeFiles() {
  edit++;
  const files = fs.readdirSync(docs, { recursive: true }).filter((f) => /\.(md|txt)$/.test(f) && !f.startsWith('added-'));
  for (const f of files.slice(0, 2)) fs.appendFileSync(path.join(docs, f), `\n\nEdit ${edit}: a webhook signature note on retries, number ${edit}.\n`);
  fs.rmSync(path.join(docs, `added-${edit - 1}.md`), { force: true });
  fs.writeFileSync(path.join(docs, `added-${edit}.md`), `# Added ${edit}\n\nRotate an API key after edit ${edit}; webhook retries back off.\n`);
}

const CHILD = {
  reindex: () => ingest('--reindex'),
  change: () => (changeFiles(), ingest()),
  keywords: () => (ageKeywordIndex(), ingest()),
  churn: () => churn(300),
};

const first = await ingest();
if (first.code !== 0) throw new Error(first.stderr);

// Three long-lived workspaces: the in-memory copies (as a chat warms them), SQLite's
// own searches (vec0 and FTS5), and a chat asking a question and its follow-up.
const memory = openWorkspace({ db: dbFile, settings: { provider: 'offline' } });
const sqlite = openWorkspace({ db: dbFile, settings: { provider: 'offline', 'search.vector': 'vec0', 'search.keyword': 'fts5' } });
await memory.warmInBackground();
const searchers = { memory: await memory.retriever(), sqlite: await sqlite.retriever() };
const chat = Chat.start(memory);
const counts = () => new Database(dbFile, { readonly: true });

function bump(map, key) {
  map[key] = (map[key] ?? 0) + 1;
}

async function searchAll(summary, during) {
  for (const [name, retriever] of Object.entries(searchers)) {
    const query = QUERIES[summary.searches % QUERIES.length];
    summary.searches++;
    try {
      const results = await retriever.search(query, { k: K });
      if (results.length < K) bump(summary.short, `${name}${during ? ' during' : ' after'}`);
    } catch (err) {
      bump(summary.errors, `${name}: ${err.code ?? ''} ${err.message}`);
    }
  }
}

async function turn(summary) {
  const question = QUESTIONS[summary.turns % QUESTIONS.length];
  summary.turns++;
  try {
    for await (const event of chat.ask(question)) {
      if (event.type === 'error') bump(summary.errors, `chat event: ${event.message}`);
      if (event.type === 'done' && event.status !== 'answered') bump(summary.errors, `chat status ${event.status}`);
    }
  } catch (err) {
    bump(summary.errors, `chat: ${err.code ?? ''} ${err.message}`);
  }
}

/** Every workspace answers as a new connection does, and the in-memory copies hold the chunks there are. */
async function check(summary) {
  const fresh = openWorkspace({ db: dbFile, create: false, settings: { provider: 'offline', 'search.vector': 'vec0', 'search.keyword': 'fts5' } });
  try {
    const reference = await fresh.retriever();
    for (const query of QUERIES) {
      const want = (await reference.search(query, { k: K })).map((r) => r.chunkId).join(',');
      for (const [name, retriever] of Object.entries(searchers)) {
        try {
          const got = (await retriever.search(query, { k: K })).map((r) => r.chunkId).join(',');
          if (got !== want) bump(summary.mismatch, name);
        } catch (err) {
          bump(summary.errors, `${name} after: ${err.code ?? ''} ${err.message}`);
        }
      }
    }
  } finally {
    await fresh.close();
  }
  const db = counts();
  const chunks = db.prepare('SELECT count(*) FROM chunks').pluck().get();
  // The keyword index was written whole (rewritten or rebuilt) when its totals count exactly the live chunks.
  if (parseKeywordTotals(db.prepare('SELECT block FROM chunks_fts_data WHERE id = 1').pluck().get())[0] === chunks) summary.keywordsWhole++;
  db.close();
  const copies = await memory.accelerators();
  if (copies.keywords.index?.ready && copies.keywords.index.size !== chunks) bump(summary.mismatch, 'keyword copy size');
  if (copies.vectors.index?.ready && copies.vectors.index.size !== chunks) bump(summary.mismatch, 'vector copy size');
  if (!copies.keywords.index?.ready) bump(summary.copies, 'keyword copy not loaded');
  if (!copies.vectors.index?.ready) bump(summary.copies, 'vector copy not loaded');
}

let failed = false;
for (const mode of MODES) {
  const summary = { mode, rounds: 0, childFailures: [], searches: 0, turns: 0, errors: {}, short: {}, mismatch: {}, copies: {}, keywordsWhole: 0, ms: 0 };
  const started = performance.now();
  for (let round = 0; round < ROUNDS; round++) {
    await searchAll(summary, false);
    let running = true;
    const child = CHILD[mode]().finally(() => (running = false));
    if (!SEQUENTIAL) {
      for (let i = 0; running; i++) {
        await searchAll(summary, true);
        if (i % 4 === 0) await turn(summary);
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const result = await child;
    if (result.code !== 0) summary.childFailures.push(result.stderr.split('\n')[0]);
    await searchAll(summary, false);
    await turn(summary);
    await check(summary);
    summary.rounds++;
  }
  summary.ms = Math.round(performance.now() - started);
  if (Object.keys(summary.errors).length || Object.keys(summary.mismatch).length || summary.childFailures.length) failed = true;
  process.stdout.write(JSON.stringify(summary) + '\n');
}
await memory.close();
await sqlite.close();
fs.rmSync(home, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
