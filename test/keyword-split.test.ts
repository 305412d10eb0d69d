// The keyword side split across the keyword helper thread (src/retrieve/keyword-worker.ts)
// must answer exactly as one connection does, and must not answer from another snapshot.

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ingest } from '../src/ingest/ingest.js';
import { OfflineEmbedder } from '../src/providers/offline-embedder.js';
import { buildFtsQuery } from '../src/retrieve/fts-query.js';
import { bm25Args, bm25Sql, KeywordHelper, MARKER_SQL, type Bm25Job } from '../src/retrieve/keyword-worker.js';
import { Retriever, type RetrievalSettings } from '../src/retrieve/search.js';
import { openDatabase, type Db } from '../src/store/db.js';
import { tempDir } from './helpers/cli.js';

const topics = ['bucket storage policy', 'api key rotation', 'billing invoice payment', 'region latency replica', 'schema table index'];

describe('keyword side split across the helper thread', () => {
  let dir: string;
  let db: Db;
  let retriever: Retriever;
  const embedder = new OfflineEmbedder();
  const saved = { split: process.env.RAGLINE_KEYWORD_SPLIT, vectors: process.env.RAGLINE_VECTOR_SEARCH };

  beforeAll(async () => {
    process.env.RAGLINE_VECTOR_SEARCH = 'vec0'; // the same vector path in both runs
    dir = tempDir('ragline-split-');
    const docs = path.join(dir, 'docs');
    fs.mkdirSync(docs);
    // 120 short documents with overlapping vocabularies, so queries match many chunks with ties.
    for (let i = 0; i < 120; i++) {
      const a = topics[i % topics.length]!, b = topics[(i * 7 + 3) % topics.length]!;
      fs.writeFileSync(path.join(docs, `note-${i}.md`), `# Note ${i % 9} ${a}\n\nAbout ${a} and ${b}. ${i % 4 === 0 ? b : ''} number ${i % 11}.\n`);
    }
    db = openDatabase(path.join(dir, 'split.db'), { create: true });
    await ingest({ root: docs, db, embedder, chunker: { size: 4000, overlap: 200 }, maxFileBytes: 1024 * 1024 });
    retriever = new Retriever(db, embedder);
  });
  afterAll(() => {
    for (const [name, value] of [['RAGLINE_KEYWORD_SPLIT', saved.split], ['RAGLINE_VECTOR_SEARCH', saved.vectors]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const searches: [string, RetrievalSettings][] = [
    ['bucket storage policy', { k: 10 }],
    ['api key rotation billing', { k: 10, candidates: 30 }],
    ['what about the invoice?', { k: 8, secondary: { query: 'what about the invoice?', weight: 1 } }],
    ['invoice payment region', { k: 8, secondary: { query: 'invoice', weight: 1 } }],
    ['invoice billing number', { k: 8, expansion: { core: 'invoice', weight: 0.85 }, secondary: { query: 'invoice', weight: 0.3 } }],
  ];

  it('gives the same results, ranks and score parts as one connection', async () => {
    process.env.RAGLINE_KEYWORD_SPLIT = 'off';
    const alone = [];
    for (const [query, settings] of searches) alone.push(await retriever.search(query, settings));
    process.env.RAGLINE_KEYWORD_SPLIT = 'on';
    const handed = vi.spyOn(KeywordHelper.prototype, 'start');
    const split = [];
    for (const [query, settings] of searches) split.push(await retriever.search(query, settings));
    expect(handed).toHaveBeenCalledTimes(searches.length);
    expect(handed.mock.results.map((r) => (r.value as { outcome: string }).outcome)).toEqual(searches.map(() => 'answered'));
    handed.mockRestore();
    expect(split).toEqual(alone);
    expect(alone.every((results) => results.length > 0)).toBe(true);
  });

  it('answers ranged jobs exactly, and refuses to answer from another snapshot', () => {
    const helper = new KeywordHelper(path.join(dir, 'split.db'));
    expect(helper.waitReady()).toBe(true);
    const row = db.prepare(MARKER_SQL).get() as { seq: number; averages: string };
    const marker = `${row.seq}:${row.averages}`;
    const match = buildFtsQuery('bucket storage billing')!;
    const jobs: Bm25Job[] = [
      { match, limit: 50, weights: [4, 1] },
      { match, limit: 7, weights: [4, 1], range: [20, 80] },
    ];
    const local = jobs.map((job) =>
      (db.prepare(bm25Sql(job.weights, job.range !== undefined)).all(...bm25Args(job)) as { id: number; bm25: number }[]).map(
        (r, i) => ({ id: r.id, rank: i + 1, score: r.bm25 }),
      ),
    );
    const run = (m: string) => {
      const pending = helper.start(jobs, m);
      const answer = pending.finish(true);
      return { answer, outcome: pending.outcome };
    };
    try {
      expect(run(marker)).toEqual({ answer: local, outcome: 'answered' });
      expect(local[1]!.length).toBeGreaterThan(0);
      expect(local[1]!.every((hit) => hit.id >= 20 && hit.id <= 80)).toBe(true);
      expect(run(`${row.seq}:not-the-same-snapshot`)).toEqual({ answer: undefined, outcome: 'stale' });
    } finally {
      helper.close();
    }
  });
});
