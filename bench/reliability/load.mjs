#!/usr/bin/env node
// One database under a mixed load, as a team's shared machine or a busy laptop
// gives it: ingests of several folders, piped chats and an MCP client searching,
// all at once, through the built CLI. Counts what each client asked against what
// the database holds afterwards, every error by its message, the MCP round trips
// (p50/p95), and checks the database: PRAGMA integrity_check, and chunks = keyword
// rows = vectors.
//
//   node bench/reliability/load.mjs [--root <build>] [--ingests 4] [--chats 8]
//       [--questions 10] [--searches 200] [--files 400]
//
// --root runs another build (a checkout with dist/ built) on the same load, for a
// before/after. The documents are fixtures/docs (ingested first, so the chats and
// searches have something to find) and --ingests generated folders of --files
// Markdown files each, ingested concurrently with the chats and the searches.
// Needs nothing outside the project. Prints one JSON summary; exits 1 when the
// database is damaged or holds turns it should not.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { arg, option, root as projectRoot } from '../turn/common.mjs';

const root = path.resolve(option('root', projectRoot));
const ingests = arg('ingests', 4);
const chats = arg('chats', 8);
const questionsPerChat = arg('questions', 10);
const searches = arg('searches', 200);
const files = arg('files', 400);

const require = createRequire(path.join(root, 'package.json'));
const Database = require('better-sqlite3');
const sqliteVec = require('sqlite-vec');
const { Client } = await import(path.join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js'));
const { StdioClientTransport } = await import(path.join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js'));

const BIN = path.join(root, 'bin/ragline.js');
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-load-'));
const dbFile = path.join(home, 'ragline.db');
const env = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), NO_COLOR: '1', RAGLINE_PROVIDER: 'offline' };

const QUESTIONS = [
  'How do I rotate an API key?',
  'does it expire?',
  'How are webhook retries scheduled?',
  'can I change that?',
  'How do I verify a webhook signature?',
  'which header carries it?',
  'How do I install the CLI?',
  'what about on Windows?',
  'What limits apply to the API?',
  'and for the free plan?',
];
const QUERIES = ['rotate an API key', 'webhook signature header', 'retry backoff schedule', 'install the CLI', 'rate limits', 'workflow plans'];

/** Runs the CLI; resolves with its exit code, stdout and stderr. */
function run(args, input) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [BIN, '--db', dbFile, ...args], { env, cwd: home, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end(input ?? '');
    child.on('close', (code) => resolve({ code, stdout, stderr: stderr.trim(), ms: performance.now() - started }));
  });
}

/** A folder of `files` generated Markdown files, each a few sections long. */
function generatedFolder(n) {
  const dir = path.join(home, `folder-${n}`);
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < files; i++) {
    const parts = Array.from(
      { length: 6 },
      (_, p) => `## Part ${p}\n\nSection ${p} of note ${i} in folder ${n} covers topic-${(i * 7 + p) % 97}, the webhook retry schedule and widget-${i % 13} settings.\n`,
    );
    fs.writeFileSync(path.join(dir, `note-${i}.md`), `# Note ${i} of folder ${n}\n\n${parts.join('\n')}`);
  }
  return dir;
}

const errors = new Map();
function countError(where, text) {
  const line = String(text).split('\n').find((l) => /error|refus|fail|already|locked|busy/i.test(l)) ?? String(text).split('\n')[0];
  const key = `${where}: ${line.replace(/\d+/g, 'N').slice(0, 160)}`;
  errors.set(key, (errors.get(key) ?? 0) + 1);
}
const pct = (values, p) => (values.length ? [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))] : null);
const round = (x) => (x === null ? null : Math.round(x * 10) / 10);

// The base index: the bundled documents.
const docs = path.join(home, 'docs');
fs.cpSync(path.join(projectRoot, 'fixtures/docs'), docs, { recursive: true });
const first = await run(['ingest', docs]);
if (first.code !== 0) {
  console.error(`the first ingest failed (${first.code}): ${first.stderr}`);
  process.exit(2);
}
const folders = Array.from({ length: ingests }, (_, n) => generatedFolder(n));

// The MCP client: one server, `searches` search calls in a row, each timed.
async function mcpClient() {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--db', dbFile, 'mcp'], env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'load-bench', version: '1' });
  await client.connect(transport);
  const times = [];
  let failed = 0;
  for (let i = 0; i < searches; i++) {
    const started = performance.now();
    try {
      const result = await client.callTool({ name: 'search', arguments: { query: QUERIES[i % QUERIES.length] } });
      if (result.isError) {
        failed++;
        countError('mcp search', result.content?.[0]?.text ?? 'tool error');
      }
    } catch (error) {
      failed++;
      countError('mcp search', error.message);
    }
    times.push(performance.now() - started);
  }
  await client.close();
  return { calls: searches, failed, p50: round(pct(times, 0.5)), p95: round(pct(times, 0.95)), max: round(Math.max(...times)), stderr };
}

const started = performance.now();
const ingestRuns = folders.map((folder) => run(['ingest', folder]));
const chatRuns = Array.from({ length: chats }, (_, c) =>
  run(['chat', '--new', `chat-${c}`, '--json'], QUESTIONS.slice(0, questionsPerChat).join('\n') + '\n'),
);
const [ingestResults, chatResults, mcp] = await Promise.all([Promise.all(ingestRuns), Promise.all(chatRuns), mcpClient()]);
const wallMs = performance.now() - started;

for (const r of ingestResults) if (r.code !== 0) countError(`ingest exit ${r.code}`, r.stderr);
let chatDone = 0;
for (const r of chatResults) {
  if (r.code !== 0) countError(`chat exit ${r.code}`, r.stderr);
  for (const line of r.stdout.split('\n')) {
    if (!line.trim()) continue;
    try {
      const event = JSON.parse(line);
      if (event.type === 'done') chatDone++;
      if (event.type === 'error') countError('chat turn', event.message ?? JSON.stringify(event));
    } catch {
      countError('chat stdout', `not JSON: ${line.slice(0, 60)}`);
    }
  }
}

// The database afterwards, read as a fresh connection.
const db = new Database(dbFile, { readonly: true });
sqliteVec.load(db);
const integrity = db.prepare('PRAGMA integrity_check').pluck().get();
const chunks = db.prepare('SELECT count(*) FROM chunks').pluck().get();
const keywordRows = db.prepare("SELECT count(*) FROM chunks_fts_docsize").pluck().get();
const vectors = db.prepare('SELECT count(*) FROM vec_chunks').pluck().get();
const chatNames = Array.from({ length: chats }, (_, c) => `chat-${c}`);
const inChats = `s.name IN (${chatNames.map(() => '?').join(', ')})`;
const turnsByStatus = Object.fromEntries(
  db.prepare(`SELECT status, count(*) AS n FROM turns t JOIN sessions s ON s.id = t.session_id WHERE ${inChats} GROUP BY status`).all(...chatNames).map((r) => [r.status, r.n]),
);
const loadSessions = db.prepare(`SELECT count(*) FROM sessions s WHERE ${inChats}`).pluck().get(...chatNames);
const mcpTurns = db.prepare(`SELECT count(*) FROM turns t JOIN sessions s ON s.id = t.session_id WHERE NOT (${inChats})`).pluck().get(...chatNames);
const documents = db.prepare('SELECT count(*) FROM documents').pluck().get();
db.close();

const asked = chats * questionsPerChat;
const summary = {
  build: root,
  load: { ingests, files, chats, questionsPerChat, searches },
  wallSeconds: round(wallMs / 1000),
  ingests: { ok: ingestResults.filter((r) => r.code === 0).length, of: ingests, seconds: ingestResults.map((r) => round(r.ms / 1000)) },
  chats: { exitedOk: chatResults.filter((r) => r.code === 0).length, of: chats, asked, doneEvents: chatDone, sessions: loadSessions, turnsStored: turnsByStatus },
  mcp: { ...mcp, turnsStored: mcpTurns, stderr: undefined },
  database: { integrity, documents, chunks, keywordRows, vectors, consistent: chunks === keywordRows && chunks === vectors },
  errors: Object.fromEntries(errors),
};
console.log(JSON.stringify(summary, null, 2));
fs.rmSync(home, { recursive: true, force: true });
const bad = integrity !== 'ok' || !summary.database.consistent || (turnsByStatus.pending ?? 0) > 0;
process.exit(bad ? 1 : 0);
