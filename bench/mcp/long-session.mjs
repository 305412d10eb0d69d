#!/usr/bin/env node
// How a session's length weighs on each call: an agent that never names a session
// stores every call in the server's own one, which can grow to thousands of turns.
// Ingests fixtures/docs into a temp database, starts `ragline mcp` (the built CLI)
// and sends `search` calls from this process; then reads each turn's own timings
// (history = loading the earlier turns, topics and running summary) by turn range.
//
//   node bench/mcp/long-session.mjs [--turns 1000]

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { arg, root } from '../turn/common.mjs';

const turns = arg('turns', 1000);
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-long-'));
const dbPath = path.join(home, 'long.db');
const env = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), RAGLINE_PROVIDER: 'offline' };
const ingest = spawnSync(process.execPath, [path.join(root, 'bin/ragline.js'), '--db', dbPath, 'ingest', path.join(root, 'fixtures/docs')], { env, encoding: 'utf8' });
if (ingest.status !== 0) throw new Error(ingest.stderr);

const { Client } = await import(path.join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js'));
const { StdioClientTransport } = await import(path.join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js'));
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(root, 'bin/ragline.js'), '--db', dbPath, 'mcp', '--session', 'long'],
  env,
  stderr: 'ignore',
});
const client = new Client({ name: 'bench', version: '1' });
await client.connect(transport);
const words = ['api key', 'webhook', 'relay agent', 'schedule', 'retries', 'workflow', 'secrets', 'deploy', 'logs', 'billing'];
const client_ms = [];
for (let i = 1; i <= turns; i++) {
  const started = performance.now();
  await client.callTool({ name: 'search', arguments: { query: `${words[i % 10]} ${words[(i * 7) % 10]} settings`, k: 3 } });
  client_ms.push(performance.now() - started);
}
await client.close();

const { openDatabase } = await import(path.join(root, 'dist/store/db.js'));
const db = openDatabase(dbPath, { readonly: true });
const timings = db
  .prepare("SELECT timings_json FROM turns WHERE session_id = (SELECT id FROM sessions WHERE name = 'long') ORDER BY ordinal")
  .all()
  .map((row) => JSON.parse(row.timings_json));
db.close();
fs.rmSync(home, { recursive: true, force: true });

const pct = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))];
console.log(`${turns} search calls in one session (fixtures/docs, offline), load average ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}\n`);
console.log('| turns | history p50 ms | server turn p50 ms | client p50 ms |\n|---|---|---|---|');
const step = Math.max(1, Math.floor(turns / 5));
for (let from = 0; from < turns; from += step) {
  const part = timings.slice(from, from + 100);
  const client = client_ms.slice(from, from + 100);
  console.log(`| ${from + 1}-${from + part.length} | ${pct(part.map((t) => t.historyMs), 0.5).toFixed(2)} | ${pct(part.map((t) => t.totalMs), 0.5).toFixed(2)} | ${pct(client, 0.5).toFixed(2)} |`);
}
