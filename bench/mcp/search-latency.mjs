#!/usr/bin/env node
// `search` through `ragline mcp` at 100k chunks, as an MCP client sees it: the
// built CLI runs as the server in a child process; this process is the client
// (the SDK's Client over stdio) and times each tools/call round trip. The server
// is started on the database bench/turn/turn-cost.mjs builds (MTRAG passages
// ingested to 100,031 chunks); the calls start once it reports both in-memory
// copies loaded. Then the server's memory (VmRSS, VmHWM from /proc).
//
//   node bench/mcp/search-latency.mjs [--chunks 100000] [--queries 150] [--warmup 10]
//
// Two series of MTRAG questions: without a session (searched as written, stored
// in the server's own session, which grows to 160 turns), and in conversations of
// 8 calls, each passing its session (gate and offline rewrite against the earlier
// calls; the sessions are created beforehand, as bench/turn/turn-cost.mjs does).
// Every call is stored as a turn, as in use.

import fs from 'node:fs';
import path from 'node:path';
import { arg, existingTurnDb, mtragQuestions, root, shared } from '../turn/common.mjs';

if (!fs.existsSync(shared)) {
  console.error(`skipped: ../shared/bench not found at ${shared}`);
  process.exit(0);
}
const chunks = arg('chunks', 100_000);
const queries = arg('queries', 150);
const warmup = arg('warmup', 10);
const dbPath = existingTurnDb(chunks);

const { openDatabase } = await import(path.join(root, 'dist/store/db.js'));
const { createSession } = await import(path.join(root, 'dist/store/sessions.js'));
const conversations = Math.ceil((warmup + queries) / 8);
const setup = openDatabase(dbPath);
const sessions = Array.from({ length: conversations }, () => createSession(setup).id);
setup.close();

const { Client } = await import(path.join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js'));
const { StdioClientTransport } = await import(path.join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js'));

const pinned = `bench-mcp-${Date.now()}`;
const home = fs.mkdtempSync(path.join(root, 'bench/out/mcp-home-'));
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(root, 'bin/ragline.js'), '--db', dbPath, 'mcp', '--session', pinned],
  env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), RAGLINE_PROVIDER: 'offline' },
  stderr: 'pipe',
});
let stderr = '';
const loaded = new Promise((resolve) => {
  transport.stderr.on('data', (d) => {
    stderr += d;
    if (stderr.includes('copies loaded')) resolve();
  });
});
const client = new Client({ name: 'bench', version: '1' });
const startedAt = performance.now();
await client.connect(transport);
const pid = transport.pid;
// While the copies load: answered from SQLite (vec0 and FTS5).
const early = [];
for (let i = 0; i < 5; i++) {
  const started = performance.now();
  await client.callTool({ name: 'search', arguments: { query: `early question ${i} about api keys` } });
  early.push(performance.now() - started);
}
const earlyLoaded = stderr.includes('copies loaded');
await loaded;
const loadMs = performance.now() - startedAt;

const memory = () => {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)[1]);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024, anon: kb('RssAnon') / 1024, file: kb('RssFile') / 1024 };
};
const afterLoad = memory();

const questions = mtragQuestions();
const pct = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))];
/** The server's own time for the same turns (runTurn's stored totalMs), to show what the protocol adds. */
function serverTimes(sessionIds) {
  const db = openDatabase(dbPath, { readonly: true });
  try {
    const rows = db
      .prepare(`SELECT timings_json FROM turns WHERE session_id IN (SELECT value FROM json_each(?)) ORDER BY id`)
      .all(JSON.stringify(sessionIds));
    return rows.slice(warmup).map((row) => JSON.parse(row.timings_json).totalMs);
  } finally {
    db.close();
  }
}

async function series(name, sessionOf) {
  const times = [];
  for (let i = 0; i < warmup + queries; i++) {
    const query = questions[i % questions.length];
    const session = sessionOf(i);
    const started = performance.now();
    const result = await client.callTool({ name: 'search', arguments: { query, ...(session ? { session } : {}) } });
    const ms = performance.now() - started;
    if (result.isError) throw new Error(`${name}: ${result.content[0].text}`);
    if (i >= warmup) times.push(ms);
  }
  return { name, times };
}

const rows = [await series('search, no session (searched as written)', () => undefined)];
rows.push(await series('search in conversations of 8 calls (gate + offline rewrite)', (i) => sessions[Math.floor(i / 8)]));
const afterCalls = memory();
await client.close();
const pinnedId = (() => {
  const db = openDatabase(dbPath, { readonly: true });
  try {
    return db.prepare('SELECT id FROM sessions WHERE name = ?').pluck().get(pinned);
  } finally {
    db.close();
  }
})();
const server = [serverTimes([pinnedId]), serverTimes(sessions)];
const table = rows.map(
  ({ name, times }, i) =>
    `| ${name} | ${times.length} | **${pct(times, 0.5).toFixed(1)}** | ${pct(times, 0.95).toFixed(1)} | ${pct(server[i], 0.5).toFixed(1)} | ${pct(server[i], 0.95).toFixed(1)} |`,
);
fs.rmSync(home, { recursive: true, force: true });

console.log(`${chunks} chunks (${dbPath}); server ready with both copies loaded ${(loadMs / 1000).toFixed(1)} s after start`);
console.log(`first 5 calls right after start${earlyLoaded ? ' (the copies were loaded before they ended)' : ', while the copies loaded'}: ${early.map((ms) => ms.toFixed(0)).join(', ')} ms`);
console.log('\n| call | n | p50 ms (client) | p95 ms (client) | p50 ms (server turn) | p95 ms (server turn) |\n|---|---|---|---|---|---|');
console.log(table.join('\n'));
const mb = (m) => `${m.rss.toFixed(0)} MB (anonymous ${m.anon.toFixed(0)} MB, file-backed ${m.file.toFixed(0)} MB; peak ${m.hwm.toFixed(0)} MB)`;
console.log(`\nserver RSS after loading ${mb(afterLoad)}; after the calls ${mb(afterCalls)}`);
console.log(`load average at the end: ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
