#!/usr/bin/env node
// Many people on one database: 4 ingests of different folders and 8 chat loops at
// once for a fixed time, against Postgres (PGlite unless RAGLINE_BENCH_PG names a
// server). Each loop asks in its own session as its own user; at the end the turns
// stored are counted against those answered (lost must be 0), chunks are checked
// for duplicates, and the turn times' p50/p95 are reported.
//
//   node bench/postgres/concurrent.mjs [--seconds 120] [--docs 300]

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { generateFolder, startPostgres } from './common.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const seconds = Number(arg('seconds', '120'));
const docs = Number(arg('docs', '300'));
const out = path.join(root, 'bench/out/postgres');
const app = await import(path.join(root, 'dist/app/index.js'));

const questions = ['How do I create a service ID?', 'does it cost anything?', 'How can I rotate an API key?', 'and in another region?', 'What happens when the quota is exceeded?'];
const folders = [0, 1, 2, 3, 4].map((i) => path.join(out, `concurrent-${docs}-${i}`));
folders.forEach((folder, i) => generateFolder(folder, docs, 100 + i));

const server = await startPostgres();
try {
  // The first folder is there before the chats start; the other four are ingested while they run.
  const base = app.openWorkspace({ db: server.url, settings: { provider: 'offline' } });
  await app.ingestFolder(base, folders[0]);
  await base.close();

  const deadline = Date.now() + seconds * 1000;
  const ingests = folders.slice(1).map(async (folder) => {
    const workspace = app.openWorkspace({ db: server.url, settings: { provider: 'offline' } });
    const started = performance.now();
    try {
      const summary = await app.ingestFolder(workspace, folder);
      return { folder: path.basename(folder), chunks: summary.chunks.written, seconds: (performance.now() - started) / 1000 };
    } finally {
      await workspace.close();
    }
  });
  const times = [];
  const answered = new Map();
  const loops = Array.from({ length: 8 }, async (_, i) => {
    const workspace = app.openWorkspace({ db: server.url, settings: { provider: 'offline', user: `user-${i}` } });
    try {
      const chat = await app.Chat.open(workspace);
      await chat.prepare();
      for (let n = 0; Date.now() < deadline; n++) {
        const started = performance.now();
        for await (const event of chat.ask(questions[n % questions.length])) {
          if (event.type === 'done' && event.status === 'answered') answered.set(chat.session.id, (answered.get(chat.session.id) ?? 0) + 1);
        }
        times.push(performance.now() - started);
      }
    } finally {
      await workspace.close();
    }
  });
  const ingested = await Promise.all(ingests);
  await Promise.all(loops);

  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const stored = new Map((await client.query(`SELECT session_id, count(*)::int AS n FROM ragline.turns WHERE status = 'answered' GROUP BY session_id`)).rows.map((r) => [r.session_id, r.n]));
  const owners = (await client.query('SELECT count(DISTINCT owner)::int AS n FROM ragline.sessions')).rows[0].n;
  const duplicates = (await client.query('SELECT count(*)::int AS n FROM (SELECT document_id, ordinal FROM ragline.chunks GROUP BY 1, 2 HAVING count(*) > 1) d')).rows[0].n;
  const pending = (await client.query(`SELECT count(*)::int AS n FROM ragline.turns WHERE status = 'pending'`)).rows[0].n;
  await client.end();
  let lost = 0;
  for (const [session, n] of answered) lost += Math.max(0, n - (stored.get(session) ?? 0));
  times.sort((a, b) => a - b);
  const q = (p) => times[Math.min(times.length - 1, Math.floor(times.length * p))].toFixed(1);
  console.log(`server: ${server.kind}; ${seconds} s; 4 ingests of ${docs} documents (10 chunks each) beside 8 chat loops`);
  console.log(`| turns answered | turns stored | lost | pending left | duplicate chunks | users | turn p50 ms | turn p95 ms |`);
  console.log('|---|---|---|---|---|---|---|---|');
  const total = [...answered.values()].reduce((a, b) => a + b, 0);
  console.log(`| ${total} | ${[...stored.values()].reduce((a, b) => a + b, 0)} | ${lost} | ${pending} | ${duplicates} | ${owners} | ${q(0.5)} | ${q(0.95)} |`);
  for (const r of ingested) console.log(`ingest ${r.folder}: ${r.chunks} chunks in ${r.seconds.toFixed(1)} s`);
} finally {
  await server.close();
}
