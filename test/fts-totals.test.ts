// The keyword index's totals (FTS5's row count and tokens per column, which bm25 weighs
// by) across incremental re-ingests. A contentless table keeps counting a deleted row,
// so an ingest that replaced or removed chunks leaves them too high; past
// KEYWORD_DRIFT_BOUND the ingest writes the keyword index again, and its totals and
// bm25 scores are then a fresh ingest's.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingest, KEYWORD_DRIFT_BOUND } from '../src/ingest/ingest.js';
import { OfflineEmbedder } from '../src/providers/offline-embedder.js';
import { buildFtsQuery } from '../src/retrieve/fts-query.js';
import { openDatabase, type Db } from '../src/store/db.js';
import { FIXTURE_DOCS } from './helpers/cli.js';

const QUESTIONS = ['How do I rotate an API key?', 'webhooks retries', 'free plan projects', 'install the cli', 'rate limits 429', 'delete a workspace'];

let home: string;
let docs: string;
const embedder = new OfflineEmbedder();
const open = (name: string) => openDatabase(path.join(home, name), { create: true });
const ingestInto = async (db: Db) => ingest({ root: docs, db, embedder, chunker: { size: 600, overlap: 100 }, maxFileBytes: 20 * 1024 * 1024 });

/** The totals record as stored, and the live chunks. */
function totals(db: Db): { block: Buffer; chunks: number } {
  return {
    block: db.prepare('SELECT block FROM chunks_fts_data WHERE id = 1').pluck().get() as Buffer,
    chunks: db.prepare('SELECT count(*) FROM chunks').pluck().get() as number,
  };
}

/** The first varint of the totals record: the rows it counts. */
function countedRows(block: Buffer): number {
  let rows = 0;
  for (let at = 0; at < block.length; at++) {
    rows = rows * 128 + (block[at]! & 0x7f);
    if (block[at]! < 0x80) break;
  }
  return rows;
}

/** Every hit of every question as "path:start line" -> bm25 (chunk ids differ between databases). */
function scores(db: Db): Map<string, number> {
  const search = db.prepare(
    `SELECT d.path || ':' || c.start_line AS key, bm25(chunks_fts, 4, 1) AS score FROM chunks_fts f
     JOIN chunks c ON c.id = f.rowid JOIN documents d ON d.id = c.document_id WHERE chunks_fts MATCH ?`,
  );
  const all = new Map<string, number>();
  for (const question of QUESTIONS) {
    for (const row of search.all(buildFtsQuery(question)!) as { key: string; score: number }[]) all.set(`${question} ${row.key}`, row.score);
  }
  return all;
}

function appendToFiles(every: number): void {
  const files = fs.readdirSync(docs, { recursive: true }).map(String).filter((f) => fs.statSync(path.join(docs, f)).isFile()).sort();
  files.forEach((file, i) => {
    if (i % every === 0) fs.appendFileSync(path.join(docs, file), '\n\nWebhooks retry a delivery five times; rotate the API key after that.\n');
  });
}

beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-fts-totals-'));
  docs = path.join(home, 'docs');
  fs.cpSync(FIXTURE_DOCS, docs, { recursive: true });
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

describe('keyword index totals across re-ingests', () => {
  it('after edits past the bound, the totals and bm25 scores are a fresh index’s', async () => {
    const db = open('drift.db');
    try {
      await ingestInto(db);
      for (let round = 0; round < 3; round++) {
        appendToFiles(1); // every file edited: every chunk replaced
        fs.rmSync(path.join(docs, round === 0 ? 'changelog.md' : round === 1 ? 'faq.md' : 'index.md'));
        await ingestInto(db);
        const fresh = open(`fresh-${round}.db`);
        try {
          await ingestInto(fresh);
          const got = totals(db);
          expect(countedRows(got.block)).toBe(got.chunks);
          expect(got.block).toEqual(totals(fresh).block);
          const want = scores(fresh);
          expect(want.size).toBeGreaterThan(20);
          const have = scores(db);
          expect([...have.keys()].sort()).toEqual([...want.keys()].sort());
          for (const [key, score] of want) expect(have.get(key), key).toBeCloseTo(score, 12);
        } finally {
          fresh.close();
        }
      }
    } finally {
      db.close();
    }
  });

  it('small edits leave the totals within the bound, and rewrite nothing', async () => {
    const db = open('drift.db');
    try {
      await ingestInto(db);
      const structure = () => db.prepare('SELECT block FROM chunks_fts_data WHERE id = 10').pluck().get() as Buffer;
      let rounds = 0;
      // One file at a time until the next edit would pass the bound: never rewritten on the way.
      for (let excess = 0; ; rounds++) {
        const file = path.join(docs, 'faq.md');
        const before = db.prepare("SELECT chunk_count FROM documents WHERE path = 'faq.md'").pluck().get() as number;
        if (excess + before > totals(db).chunks * KEYWORD_DRIFT_BOUND) break;
        fs.appendFileSync(file, `\n\nEdit ${rounds}.\n`);
        await ingestInto(db);
        const got = totals(db);
        excess += before;
        expect(countedRows(got.block) - got.chunks).toBe(excess);
        expect(excess).toBeLessThanOrEqual(got.chunks * KEYWORD_DRIFT_BOUND);
      }
      expect(rounds).toBeGreaterThan(0);
      // Edits that pass the bound rewrite the index: its totals are true again.
      const before = structure();
      appendToFiles(2);
      await ingestInto(db);
      const got = totals(db);
      expect(countedRows(got.block)).toBe(got.chunks);
      expect(structure()).not.toEqual(before);
    } finally {
      db.close();
    }
  });
});
