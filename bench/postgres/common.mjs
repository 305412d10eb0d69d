// What the Postgres benchmarks share: a Postgres without a server installed
// (PGlite with pgvector and pg_textsearch on a loopback port, as
// test/helpers/pglite.ts, or the server in RAGLINE_BENCH_PG when it is set), and
// folders of generated documents.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { pg_textsearch } from '@electric-sql/pglite-pg_textsearch';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export async function startPostgres() {
  if (process.env.RAGLINE_BENCH_PG) return { url: process.env.RAGLINE_BENCH_PG, kind: 'server', close: async () => {} };
  const db = await PGlite.create({ extensions: { vector, pg_textsearch } });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 64 });
  await server.start();
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    kind: 'PGlite 0.5 (Postgres 18, WebAssembly)',
    db,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** mulberry32. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` documents of 10 sections each, every section about 1,500 characters (one chunk at the default size). */
export function generateFolder(folder, count, seed) {
  if (fs.existsSync(path.join(folder, '.done'))) return;
  fs.rmSync(folder, { recursive: true, force: true });
  fs.mkdirSync(folder, { recursive: true });
  const sentences = [];
  for (const line of fs.readFileSync(path.resolve(root, '../shared/bench/corpus_cloud.jsonl'), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    for (const s of JSON.parse(line).text.split(/(?<=[.!?])\s+/)) if (s.length > 40 && s.length < 300) sentences.push(s);
    if (sentences.length > 200_000) break;
  }
  const next = rng(seed);
  for (let d = 0; d < count; d++) {
    let text = `# Document ${seed}-${d}\n\n`;
    for (let s = 0; s < 10; s++) {
      text += `## Section ${s} of ${d}\n\n`;
      let body = '';
      while (body.length < 1400) body += sentences[Math.floor(next() * sentences.length)] + ' ';
      text += body + '\n\n';
    }
    fs.writeFileSync(path.join(folder, `doc-${String(d).padStart(6, '0')}.md`), text);
  }
  fs.writeFileSync(path.join(folder, '.done'), '');
}

