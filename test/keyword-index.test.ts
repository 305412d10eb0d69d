// The in-memory keyword index against FTS5 itself: the same chunks, in the same order,
// with the same bm25 scores, for the queries the search builds from any text; kept in
// step with the database across edits, removals and new files; and used by the search
// once loaded, with the same results as FTS5.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ingest } from '../src/ingest/ingest.js';
import { DEFAULT_SEARCH_PATHS } from '../src/config/index.js';
import { OfflineEmbedder } from '../src/providers/offline-embedder.js';
import { buildFtsPhraseQuery, buildFtsQuery } from '../src/retrieve/fts-query.js';
import { Fts5Search } from '../src/retrieve/fts5.js';
import type { KeywordSearch } from '../src/retrieve/interfaces.js';
import { SearchAccelerators } from '../src/retrieve/memory/accelerators.js';
import { keywordFileOf, readKeywordFile } from '../src/retrieve/memory/keyword-file.js';
import { buildKeywordSnapshot, keptOrBuiltSnapshot, KeywordIndex, parseOrQuery, titleLine, type KeywordSnapshot } from '../src/retrieve/memory/keyword-index.js';
import { INDEX_TEXT_VERSION } from '../src/text/symbols.js';
import { Retriever } from '../src/retrieve/search.js';
import { openDatabase, type Db } from '../src/store/db.js';
import { keywordTotalRows } from '../src/store/documents.js';
import { FIXTURE_DOCS } from './helpers/cli.js';

const QUESTIONS = [
  'How do I rotate an API key?',
  'what about webhooks',
  'Is the free plan limited to three projects?',
  'set max_connections on orbitly-cli v1.2.3',
  'rate limits for the REST API and retries after 429',
  'NEAR AND NOT OR * ^ ( "unbalanced',
  'Ünïcödé naïve café, 東京タワー and emoji 🎉',
  'install the cli',
  'delete a workspace',
  'the',
  'How do I set the C++ standard? C# and F# on .NET, node.js with --leak-check',
];

function ftsSearch(db: Db, match: string, weights: [number, number], limit: number) {
  return db
    .prepare(`SELECT rowid AS id, bm25(chunks_fts, ${weights.join(', ')}) AS bm25 FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25, rowid LIMIT ?`)
    .all(match, limit) as { id: number; bm25: number }[];
}

/** Same ids in the same order and the same scores (to float rounding) as FTS5, for every query of `QUESTIONS`. */
function expectSameAsFts(db: Db, index: KeywordIndex | KeywordSearch, weights: [number, number] = [4, 1], limit = 50): number {
  let compared = 0;
  for (const question of QUESTIONS) {
    for (const match of [buildFtsQuery(question), buildFtsPhraseQuery(question)]) {
      if (!match) continue;
      const want = ftsSearch(db, match, weights, limit);
      const got = index.search(match, weights, limit)!;
      expect(got.map((hit) => hit.id), match).toEqual(want.map((row) => row.id));
      got.forEach((hit, i) => expect(hit.score).toBeCloseTo(want[i]!.bm25, 9));
      compared += want.length;
    }
  }
  return compared;
}

let home: string;
let docs: string;
let db: Db;
const embedder = new OfflineEmbedder();
const ingestDocs = () => ingest({ root: docs, db, embedder, chunker: { size: 600, overlap: 100 }, maxFileBytes: 20 * 1024 * 1024 });

/** An edit, a removal and a new file, ingested through a second connection to the database. */
async function editThroughAnotherConnection(): Promise<void> {
  const writer = openDatabase(path.join(home, 'ragline.db'));
  try {
    const file = path.join(docs, 'faq.md');
    fs.writeFileSync(file, `${fs.readFileSync(file, 'utf8')}\n\n## Webhooks again\n\nWebhooks retry a delivery five times before giving up.\n`);
    fs.rmSync(path.join(docs, 'changelog.md'));
    fs.writeFileSync(path.join(docs, 'extra.md'), '# Extra\n\nA new page about API key rotation and webhooks.\n');
    await ingest({ root: docs, db: writer, embedder, chunker: { size: 600, overlap: 100 }, maxFileBytes: 20 * 1024 * 1024 });
  } finally {
    writer.close();
  }
}

beforeEach(async () => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-keyword-'));
  docs = path.join(home, 'docs');
  fs.cpSync(FIXTURE_DOCS, docs, { recursive: true });
  // Names the keyword side spells as words (C++ -> cplusplus): FTS5 and the copy must agree on them too.
  fs.writeFileSync(path.join(docs, 'languages.md'), '# SDKs for C++, C# and .NET\n\nThe C++ SDK needs C++17; the C# and F# SDKs run on .NET 8 and ASP.NET. The node.js SDK is tested with valgrind --leak-check=full.\n');
  db = openDatabase(path.join(home, 'ragline.db'), { create: true });
  await ingestDocs();
});
afterEach(() => {
  db.close();
  fs.rmSync(home, { recursive: true, force: true });
});

describe('KeywordIndex', () => {
  it('ranks and scores as FTS5 bm25 does, for terms, phrases, identifiers and hostile text', () => {
    const index = new KeywordIndex(db);
    index.refresh();
    expect(index.size).toBe((db.prepare('SELECT count(*) AS n FROM chunks').get() as { n: number }).n);
    expect(expectSameAsFts(db, index)).toBeGreaterThan(200);
    expectSameAsFts(db, index, [1, 1], 5);
    expectSameAsFts(db, index, [10, 0.5], 500);
  });

  it('follows edits, removals and new files made through another connection', async () => {
    const index = new KeywordIndex(db);
    index.refresh();
    await editThroughAnotherConnection();
    index.refresh();
    expect(index.size).toBe((db.prepare('SELECT count(*) AS n FROM chunks').get() as { n: number }).n);
    expectSameAsFts(db, index);
  });

  it('follows an ingest that rewrote the keyword index (its totals counted too many deleted rows)', async () => {
    const index = new KeywordIndex(db);
    index.refresh();
    const chunks = () => db.prepare('SELECT count(*) FROM chunks').pluck().get() as number;
    // Every file edited, twice: every chunk replaced, so the index counted twice its rows
    // and the ingest wrote it again with true totals (chunk ids unchanged).
    for (let round = 0; round < 2; round++) {
      for (const file of fs.readdirSync(docs, { recursive: true }).map(String)) {
        if (fs.statSync(path.join(docs, file)).isFile()) fs.appendFileSync(path.join(docs, file), `\n\nWebhooks, round ${round}.\n`);
      }
      await ingestDocs();
      index.refresh();
      expect(keywordTotalRows(db)).toBe(chunks());
      expect(index.size).toBe(chunks());
      expectSameAsFts(db, index);
    }
  });

  it('compacts its postings once most chunks are gone, and still scores as FTS5', async () => {
    const index = new KeywordIndex(db, { compactAfter: 1 });
    index.refresh();
    const before = index.memoryBytes;
    for (const entry of fs.readdirSync(docs)) if (entry !== 'faq.md') fs.rmSync(path.join(docs, entry), { recursive: true });
    await ingestDocs();
    index.refresh();
    expect(index.memoryBytes).toBeLessThan(before);
    expectSameAsFts(db, index);
  });

  it('builds the same copy in one piece (a snapshot, as a worker thread builds it) as chunk by chunk', async () => {
    const byChunk = new KeywordIndex(db);
    await byChunk.warm(() => false, 3); // slices of 3 chunks, each added on its own
    const snapshot = buildKeywordSnapshot(db)!;
    const adopted = new KeywordIndex(db);
    adopted.adopt(snapshot);
    expect(adopted.size).toBe(byChunk.size);
    for (const question of QUESTIONS) {
      for (const match of [buildFtsQuery(question), buildFtsPhraseQuery(question)]) {
        if (match) expect(adopted.search(match, [4, 1], 100), match).toEqual(byChunk.search(match, [4, 1], 100));
      }
    }
    expectSameAsFts(db, adopted);
    expect(buildKeywordSnapshot(db, 1000)).toBeUndefined(); // over its memory budget
  });

  it('an adopted snapshot follows later edits through its views, and compacts them away', async () => {
    const index = new KeywordIndex(db, { compactAfter: 1 });
    index.adopt(buildKeywordSnapshot(db)!);
    fs.writeFileSync(path.join(docs, 'extra.md'), '# Extra\n\nA new page about API key rotation and webhooks.\n');
    await ingestDocs();
    index.refresh();
    expectSameAsFts(db, index);
    for (const entry of fs.readdirSync(docs)) if (entry !== 'extra.md') fs.rmSync(path.join(docs, entry), { recursive: true });
    await ingestDocs();
    index.refresh();
    expect(index.size).toBe((db.prepare('SELECT count(*) AS n FROM chunks').get() as { n: number }).n);
    expectSameAsFts(db, index);
  });

  it('keeps offsets past 255 and 65535 tokens in a column, and phrases across them score as FTS5', async () => {
    const words = Array.from({ length: 70_000 }, (_, i) => (i % 997 === 0 ? 'rotate key' : `w${i % 5000}`));
    const longDocs = path.join(home, 'long');
    fs.mkdirSync(longDocs);
    fs.writeFileSync(path.join(longDocs, 'long.txt'), words.join(' '));
    fs.writeFileSync(path.join(longDocs, 'short.txt'), 'rotate key w12 then key w1 and w4999 rotate');
    const longDb = openDatabase(path.join(home, 'long.db'), { create: true });
    try {
      await ingest({ root: longDocs, db: longDb, embedder, chunker: { size: 2_000_000, overlap: 0 }, maxFileBytes: 20 * 1024 * 1024 });
      const snapshot = buildKeywordSnapshot(longDb)!;
      expect(snapshot.positions).toBeInstanceOf(Uint32Array); // one column holds more than 65535 tokens
      const index = new KeywordIndex(longDb);
      index.adopt(snapshot);
      for (const match of ['"rotate key"', '"w4999 rotate"', '"w12" OR "key w1"', '"key w998"']) {
        const want = ftsSearch(longDb, match, [4, 1], 20);
        expect(want.length, match).toBeGreaterThan(0);
        const got = index.search(match, [4, 1], 20)!;
        expect(got.map((hit) => hit.id), match).toEqual(want.map((row) => row.id));
        got.forEach((hit, i) => expect(hit.score).toBeCloseTo(want[i]!.bm25, 9));
      }
    } finally {
      longDb.close();
    }
  });

  it('is kept beside the database and read back while the database is unchanged; a change or a damaged file means a new build', async () => {
    const file = keywordFileOf(path.join(home, 'ragline.db'));
    expect(keptOrBuiltSnapshot(db)).toBeDefined();
    expect(fs.existsSync(file)).toBe(false); // a small database is not worth a file
    const built = keptOrBuiltSnapshot(db, Infinity, { keepMinChunks: 1 })!;
    expect(fs.existsSync(file)).toBe(true);
    const kept = readKeywordFile(file, built.fingerprint, INDEX_TEXT_VERSION)!;
    expect(kept).toEqual(built);
    expect(readKeywordFile(file, built.fingerprint, INDEX_TEXT_VERSION + 1)).toBeUndefined(); // keyword text of another version
    expect(readKeywordFile(file, built.fingerprint, INDEX_TEXT_VERSION, 1000)).toBeUndefined(); // over its memory budget
    // What a process that finds the file loads: the same copy, searched as FTS5 does.
    const index = new KeywordIndex(db);
    index.refresh();
    expectSameAsFts(db, index);

    await editThroughAnotherConnection();
    const fingerprint = (db.prepare("SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0) || ':' || coalesce((SELECT hex(block) FROM chunks_fts_data WHERE id = 10), '')").pluck().get() as string);
    expect(fingerprint).not.toBe(built.fingerprint);
    expect(readKeywordFile(file, fingerprint, INDEX_TEXT_VERSION)).toBeUndefined(); // built before the edit: not used
    const rebuilt = keptOrBuiltSnapshot(db, Infinity, { keepMinChunks: 1 })!;
    expect(rebuilt.fingerprint).toBe(fingerprint);
    expect(readKeywordFile(file, fingerprint, INDEX_TEXT_VERSION)).toEqual(rebuilt); // and written again
    const fresh = new KeywordIndex(db);
    fresh.refresh();
    expectSameAsFts(db, fresh);

    fs.truncateSync(file, fs.statSync(file).size - 3);
    expect(readKeywordFile(file, fingerprint, INDEX_TEXT_VERSION)).toBeUndefined();
    const bytes = fs.readFileSync(file);
    bytes[40] ^= 0xff;
    fs.writeFileSync(file, bytes);
    expect(readKeywordFile(file, fingerprint, INDEX_TEXT_VERSION)).toBeUndefined();
  });

  it('reads only quoted strings joined with OR; anything else is left to FTS5', () => {
    expect(parseOrQuery('"api" OR "rotate key" OR "say ""hi"""')).toEqual([['api'], ['rotat', 'kei'], ['sai', 'hi']]);
    expect(parseOrQuery('"max_connections"')).toEqual([['max', 'connect']]);
    expect(parseOrQuery('"a" AND "b"')).toBeUndefined();
    expect(parseOrQuery('api')).toBeUndefined();
    expect(parseOrQuery('"unterminated')).toBeUndefined();
    expect(parseOrQuery('title:"x"')).toBeUndefined();
  });

  it('rebuilds the title column as ingest writes it', () => {
    expect(titleLine('Orbitly', 'Orbitly > Setup')).toBe('Orbitly > Setup');
    expect(titleLine('Orbitly', 'Orbitly')).toBe('Orbitly');
    expect(titleLine('Orbitly', 'Install > Linux')).toBe('Orbitly > Install > Linux');
    expect(titleLine('Orbitly', '')).toBe('Orbitly');
    expect(titleLine(null, 'Install')).toBe('Install');
  });
});

// The contract of a keyword search: both implementations, FTS5 (the reference) and
// the in-memory copy as a retriever asks it (refreshed before each search, FTS5 for
// what it does not read), rank and score as FTS5's bm25() does and follow every write.
const keywordSearches: [string, (db: Db) => { search: KeywordSearch; close(): void }][] = [
  ['FTS5 (the reference)', (db) => ({ search: new Fts5Search(db), close: () => {} })],
  [
    'the in-memory copy',
    (db) => {
      const accelerators = new SearchAccelerators(db);
      const fts = new Fts5Search(db);
      const search: KeywordSearch = {
        search: (match, weights, limit) => accelerators.keywordSearch({ keyword: 'memory' }, fts).search(match, weights, limit),
      };
      return { search, close: () => accelerators.close() };
    },
  ],
];

describe.each(keywordSearches)('KeywordSearch: %s', (_name, make) => {
  it('ranks and scores as FTS5 bm25 does, for terms, phrases, identifiers and hostile text', () => {
    const { search, close } = make(db);
    try {
      expect(expectSameAsFts(db, search)).toBeGreaterThan(200);
      expectSameAsFts(db, search, [1, 1], 5);
      expectSameAsFts(db, search, [10, 0.5], 500);
      expect(search.search('"webhooks"', [4, 1], 0)).toEqual([]);
    } finally {
      close();
    }
  });

  it('follows edits, removals and new files made through another connection', async () => {
    const { search, close } = make(db);
    try {
      expectSameAsFts(db, search);
      await editThroughAnotherConnection();
      expect(expectSameAsFts(db, search)).toBeGreaterThan(200);
      expect(search.search('"rotation" OR "webhooks"', [4, 1], 100).length).toBeGreaterThan(0);
    } finally {
      close();
    }
  });
});

describe('the copy built on a worker thread (compiled modules)', () => {
  const dist = path.resolve('dist/retrieve/memory/keyword-worker.js');
  beforeAll(() => {
    if (!fs.existsSync(dist)) throw new Error('Build first: npx tsc -p .');
  });

  it('reads the database file on its own connection and hands back the same copy', async () => {
    const { snapshotInWorker } = (await import(dist)) as typeof import('../src/retrieve/memory/keyword-worker.js');
    const result = await snapshotInWorker(db, Infinity)!;
    expect('snapshot' in result).toBe(true);
    const index = new KeywordIndex(db);
    index.adopt((result as { snapshot: KeywordSnapshot }).snapshot);
    expect(index.size).toBe((db.prepare('SELECT count(*) AS n FROM chunks').get() as { n: number }).n);
    expect(expectSameAsFts(db, index)).toBeGreaterThan(200);
    expect(await snapshotInWorker(db, 1000)).toEqual({ overBudget: true });
    const memory = openDatabase(':memory:');
    try {
      expect(snapshotInWorker(memory, Infinity)).toBeUndefined(); // no file for a worker to read
    } finally {
      memory.close();
    }
  });

  it('is what a chat loads in the background, and it searches as FTS5 does', async () => {
    const memory = (await import(path.resolve('dist/retrieve/memory/accelerators.js'))) as typeof import('../src/retrieve/memory/accelerators.js');
    const { openDatabase: openDist } = (await import(path.resolve('dist/store/db.js'))) as typeof import('../src/store/db.js');
    const other = openDist(path.join(home, 'ragline.db'));
    const accelerators = new memory.SearchAccelerators(other);
    try {
      await accelerators.keywords.warmInBackground();
      const index = accelerators.keywords.index!;
      expect(index.ready).toBe(true);
      expectSameAsFts(other, index as unknown as KeywordIndex);
    } finally {
      accelerators.close();
      other.close();
    }
  });
});

describe('search with the in-memory keyword index', () => {
  it('answers from FTS5 until the copy is loaded, then from the copy, with the same results', async () => {
    const retriever = new Retriever(db, embedder, { ...DEFAULT_SEARCH_PATHS, keyword: 'fts5' });
    const settings = { k: 8 };
    const fromFts = await Promise.all(QUESTIONS.map((q) => retriever.search(q, settings)));

    const other = openDatabase(path.join(home, 'ragline.db'));
    try {
      const fresh = new Retriever(other, embedder);
      const copy = fresh.accelerators.keywords;
      await fresh.search(QUESTIONS[0]!, settings);
      expect(copy.index?.ready ?? false).toBe(false); // first search: FTS5, load scheduled
      await copy.warmInBackground();
      expect(copy.index?.ready).toBe(true);
      const fromCopy: typeof fromFts = [];
      for (const q of QUESTIONS) fromCopy.push(await fresh.search(q, settings));
      const ids = (results: typeof fromCopy) => results.map((r) => r.map((c) => [c.chunkId, c.keywordRank, c.bm25 === undefined ? undefined : Number(c.bm25.toFixed(9))]));
      expect(ids(fromCopy)).toEqual(ids(fromFts));
      fresh.close();
    } finally {
      other.close();
    }
  });

  it('never loads the copy synchronously while a background load is under way (a server keeps answering from FTS5)', async () => {
    const other = openDatabase(path.join(home, 'ragline.db'));
    const copy = new SearchAccelerators(other).keywords;
    try {
      const warming = copy.warmInBackground();
      // Synchronous calls: the background load cannot finish between them.
      const answered = Array.from({ length: 25 }, () => copy.indexFor());
      expect(answered.every((index) => index === undefined)).toBe(true); // FTS5 each time, past the 20 of a run of searches
      expect(copy.index?.ready ?? false).toBe(false);
      await warming;
      expect(copy.indexFor()?.ready).toBe(true);
    } finally {
      copy.close();
      other.close();
    }
  });

  it('keeps to the paths the retriever is given: fts5 never builds a copy, memory answers from copies at once', async () => {
    const settings = { k: 5 };
    const onFts = new Retriever(db, embedder, { ...DEFAULT_SEARCH_PATHS, keyword: 'fts5' });
    for (let i = 0; i < 25; i++) await onFts.search(QUESTIONS[i % QUESTIONS.length]!, settings); // past the synchronous load
    expect(onFts.accelerators.keywords.index).toBeUndefined();

    const other = openDatabase(path.join(home, 'ragline.db'));
    try {
      const inMemory = new Retriever(other, embedder, { vector: 'memory', keyword: 'memory', vectorThreads: 1 });
      await inMemory.search(QUESTIONS[0]!, settings);
      expect(inMemory.accelerators.keywords.index?.ready).toBe(true);
      expect(inMemory.accelerators.vectors.index?.ready).toBe(true);
      inMemory.close();
    } finally {
      other.close();
    }
  });
});

describe('FTS5 search errors', () => {
  it('a query FTS5 cannot parse finds nothing; a damaged index is an error, not "no matches"', () => {
    const fts = new Fts5Search(db);
    expect(fts.search('"unbalanced', [4, 1], 10)).toEqual([]);
    expect(fts.search('"webhooks"', [4, 1], 10).length).toBeGreaterThan(0);
    // The index's own pages gone (as a damaged file would lose them), the chunks kept.
    db.unsafeMode(true); // SQLite's defensive mode forbids writing an index's own tables
    db.exec('DELETE FROM chunks_fts_data WHERE id > 10');
    db.unsafeMode(false);
    expect(() => new Fts5Search(db).search('"webhooks"', [4, 1], 10)).toThrow(/malformed|corrupt/i);
  });
});
