// Writes fixtures/db/schema-v1.db: a small database at schema version 1, made by
// the shipped migration 1 exactly as it stands (migrations are never edited), with
// three documents, their chunks, FTS rows and offline vectors, the index
// fingerprint, and one session with two turns and their retrieved chunks.
// test/migrations.test.ts opens a copy and checks it migrates to the latest
// schema with all of this intact. Run after `npx tsc -p .`:
//   node bench/reliability/make-schema-v1.mjs

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { MIGRATIONS } from '../../dist/store/migrations.js';
import { DocumentWriter } from '../../dist/store/documents.js';
import { createVectorTable } from '../../dist/store/vectors.js';
import { setFingerprint } from '../../dist/store/meta.js';
import { OfflineEmbedder } from '../../dist/providers/offline-embedder.js';
import { indexText } from '../../dist/ingest/index-text.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const out = path.join(root, 'fixtures', 'db', 'schema-v1.db');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.rmSync(out, { force: true });

const db = new Database(out);
sqliteVec.load(db);
db.pragma('journal_mode = DELETE'); // one self-contained file
db.transaction(() => {
  MIGRATIONS[0].up(db);
  db.pragma('user_version = 1');
}).immediate();

const embedder = new OfflineEmbedder();
createVectorTable(db, embedder.dimensions);
setFingerprint(db, { embedder: embedder.id, dimensions: embedder.dimensions, chunker: { size: 3000, overlap: 150 } });

const docs = [
  {
    path: 'keys.md',
    title: 'API keys',
    chunks: [
      { heading: ['API keys'], text: '# API keys\n\nRotate an API key from the dashboard under Settings > Keys.', startLine: 1, endLine: 3 },
      { heading: ['API keys', 'Expiry'], text: '## Expiry\n\nKeys expire after 90 days unless pinned.', startLine: 5, endLine: 7 },
    ],
  },
  {
    path: 'guides/webhooks.md',
    title: 'Webhooks',
    chunks: [{ heading: ['Webhooks'], text: '# Webhooks\n\nEvery webhook carries a signature header, X-Orbitly-Signature.', startLine: 1, endLine: 3 }],
  },
  {
    path: 'notes.txt',
    title: undefined,
    chunks: [{ heading: [], text: 'Plain notes: the relay agent reconnects every 30 seconds.', startLine: 1, endLine: 1 }],
  },
];

const writer = new DocumentWriter(db);
for (const [i, doc] of docs.entries()) {
  const indexed = doc.chunks.map((c) => ({ chunk: c, indexed: indexText(doc.title, c.heading, c.text) }));
  const vectors = await embedder.embed(indexed.map((x) => x.indexed.embed));
  writer.replaceDocument(
    {
      path: doc.path,
      root: '/fixture/docs',
      kind: doc.path.endsWith('.txt') ? 'text' : 'markdown',
      title: doc.title,
      contentHash: `sha256-of-${doc.path}`,
      size: 100 + i,
      mtimeMs: 1_700_000_000_000 + i,
    },
    indexed.map(({ chunk, indexed: x }, n) => ({
      heading: x.heading,
      text: chunk.text,
      startLine: chunk.startLine,
      endLine: chunk.endLine,
      locator: 'line',
      textHash: x.hash,
      fts: x.fts,
      vector: vectors[n],
    })),
  );
}

db.prepare("INSERT INTO sessions (id, name, created_at, updated_at) VALUES ('s-v1abcd', 'old-session', '2025-01-02T03:04:05.000Z', '2025-01-02T03:05:00.000Z')").run();
const turn = db.prepare(`INSERT INTO turns (session_id, ordinal, created_at, finished_at, status, question, standalone_query,
  rewrite_decision, rewrite_reason, answer, answer_kind, embed_model, summary)
  VALUES ('s-v1abcd', @ordinal, @at, @at, 'answered', @question, @standalone, @decision, 'fixture', @answer, 'extractive', @model, NULL)`);
turn.run({ ordinal: 1, at: '2025-01-02T03:04:05.000Z', question: 'How do I rotate a key?', standalone: 'How do I rotate a key?', decision: 'skipped', answer: 'From Settings > Keys [1].', model: embedder.id });
turn.run({ ordinal: 2, at: '2025-01-02T03:05:00.000Z', question: 'And when do they expire?', standalone: 'When do API keys expire?', decision: 'rewritten', answer: 'After 90 days [1].', model: embedder.id });
const chunk = db.prepare("SELECT c.id, c.start_line, c.end_line, c.heading, c.text_hash FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.path = 'keys.md' ORDER BY c.ordinal").all();
const turnIds = db.prepare('SELECT id FROM turns ORDER BY ordinal').pluck().all();
const tc = db.prepare(`INSERT INTO turn_chunks (turn_id, rank, chunk_id, document_path, start_line, end_line, locator, heading, text_hash, score)
  VALUES (?, 1, ?, 'keys.md', ?, ?, 'line', ?, ?, 0.5)`);
turnIds.forEach((id, i) => tc.run(id, chunk[i].id, chunk[i].start_line, chunk[i].end_line, chunk[i].heading, chunk[i].text_hash));

db.exec('VACUUM');
db.close();
console.log(`wrote ${path.relative(root, out)} (${fs.statSync(out).size} bytes, schema 1)`);
