// Running `ragline ingest` again on the same folder (the CLI run
// in-process, real SQLite file): only what changed is chunked and embedded,
// deleted files leave no rows behind in chunks, chunks_fts or vec_chunks,
// renamed and duplicated files reuse stored vectors, and a different embedder or
// chunk size is refused until --reindex.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { FIXTURE_DOCS, isolatedEnv, ragline, tempDir } from './helpers/cli.js';

let home: string;
let docs: string;
const dbFile = () => path.join(home, 'data', 'ragline', 'ragline.db');

interface Summary {
  files: { added: number; changed: number; unchanged: number; removed: number; skipped: Record<string, number> };
  chunks: { written: number; embedded: number; reused: number; removed: number };
}

beforeEach(() => {
  home = tempDir();
  docs = path.join(home, 'docs');
  fs.cpSync(FIXTURE_DOCS, docs, { recursive: true });
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

async function ingest(...flags: string[]): Promise<Summary> {
  const result = await ragline(['ingest', docs, '--json', ...flags], { env: isolatedEnv(home) });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Summary;
}

function counts() {
  const db = new Database(dbFile(), { readonly: true });
  sqliteVec.load(db);
  try {
    const one = (sql: string, ...args: unknown[]) => db.prepare(sql).pluck().get(...args) as number;
    return {
      documents: one('SELECT count(*) FROM documents'),
      chunks: one('SELECT count(*) FROM chunks'),
      fts: one('SELECT count(*) FROM chunks_fts'),
      vectors: one('SELECT count(*) FROM vec_chunks'),
      chunkCountSum: one('SELECT coalesce(sum(chunk_count), 0) FROM documents'),
      orphanFts: one('SELECT count(*) FROM chunks_fts WHERE rowid NOT IN (SELECT id FROM chunks)'),
      orphanVectors: one('SELECT count(*) FROM vec_chunks WHERE rowid NOT IN (SELECT id FROM chunks)'),
    };
  } finally {
    db.close();
  }
}

/** FTS5's record of the index's totals (row count, then tokens per column), as stored. */
function ftsTotals(): Buffer {
  const db = new Database(dbFile(), { readonly: true });
  try {
    return db.prepare('SELECT block FROM chunks_fts_data WHERE id = 1').pluck().get() as Buffer;
  } finally {
    db.close();
  }
}

function skippedFiles(): { path: string; reason: string }[] {
  const db = new Database(dbFile(), { readonly: true });
  try {
    return db.prepare('SELECT path, reason FROM skipped_files ORDER BY path').all() as { path: string; reason: string }[];
  } finally {
    db.close();
  }
}

function chunksOf(relative: string): number {
  const db = new Database(dbFile(), { readonly: true });
  try {
    return db.prepare('SELECT chunk_count FROM documents WHERE path = ?').pluck().get(relative) as number;
  } finally {
    db.close();
  }
}

function expectConsistent(c = counts()) {
  expect(c.fts).toBe(c.chunks);
  expect(c.vectors).toBe(c.chunks);
  expect(c.chunkCountSum).toBe(c.chunks);
  expect(c.orphanFts).toBe(0);
  expect(c.orphanVectors).toBe(0);
}

describe('incremental ingest', () => {
  test('an unchanged folder embeds nothing and reports every file unchanged', async () => {
    const first = await ingest();
    const before = counts();
    const second = await ingest();
    expect(second.files).toEqual({ added: 0, changed: 0, unchanged: first.files.added, removed: 0, skipped: {} });
    expect(second.chunks).toEqual({ written: 0, embedded: 0, reused: 0, removed: 0 });
    expect(counts()).toEqual(before);
  });

  test('an unchanged folder is not written to at all: same file bytes, nothing in the WAL, no lock left', async () => {
    fs.writeFileSync(path.join(docs, 'blank.md'), '   \n'); // read and skipped again on every run
    await ingest();
    const db = new Database(dbFile());
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const bytes = fs.readFileSync(dbFile());
    const second = await ingest();
    expect(second.files.skipped).toEqual({ empty: 1 });
    expect(fs.readFileSync(dbFile()).equals(bytes)).toBe(true);
    const wal = dbFile() + '-wal';
    expect(fs.existsSync(wal) ? fs.statSync(wal).size : 0).toBe(0);
    // an edit afterwards is written as usual, and the lock is released
    fs.appendFileSync(path.join(docs, 'blank.md'), '# Now it has a heading\n\nAnd a line.\n');
    expect((await ingest()).files.added).toBe(1);
    const after = new Database(dbFile(), { readonly: true });
    expect(after.prepare("SELECT count(*) FROM meta WHERE key = 'ingest.lock'").pluck().get()).toBe(0);
    after.close();
  });

  test('an edited file is re-chunked and only its new chunks are embedded', async () => {
    const first = await ingest();
    fs.appendFileSync(path.join(docs, 'faq.md'), '\n## Brand new question\n\nA freshly added answer about zebra-crossing quotas.\n');
    const second = await ingest();
    expect(second.files).toMatchObject({ added: 0, changed: 1, unchanged: first.files.added - 1, removed: 0 });
    expect(second.chunks.written).toBe(chunksOf('faq.md'));
    expect(second.chunks.embedded).toBeGreaterThanOrEqual(1);
    expect(second.chunks.embedded).toBeLessThanOrEqual(second.chunks.written);
    expectConsistent();
  });

  test("a deleted file's chunks, FTS rows and vectors are all removed", async () => {
    await ingest();
    const before = counts();
    const faqChunks = chunksOf('faq.md');
    fs.rmSync(path.join(docs, 'faq.md'));
    const second = await ingest();
    expect(second.files.removed).toBe(1);
    expect(second.chunks.removed).toBe(faqChunks);
    const after = counts();
    expect(after.documents).toBe(before.documents - 1);
    expect(after.chunks).toBe(before.chunks - faqChunks);
    expectConsistent(after);
  });

  test('a file emptied since the last ingest is skipped as empty and its document removed', async () => {
    await ingest();
    const before = counts();
    const faqChunks = chunksOf('faq.md');
    fs.writeFileSync(path.join(docs, 'faq.md'), '  \n');
    const second = await ingest();
    expect(second.files).toMatchObject({ added: 0, changed: 0, removed: 1, skipped: { empty: 1 } });
    expect(second.chunks.removed).toBe(faqChunks);
    expect(counts().documents).toBe(before.documents - 1);
    expectConsistent();
  });

  test('a file skipped for its content is not read again while its size and mtime are unchanged', async () => {
    const blob = path.join(docs, 'blob.txt');
    fs.writeFileSync(blob, Buffer.from('binary\0data\0here\n'));
    // Whole seconds: utimes takes seconds as a float, which can land a hair below a millisecond.
    const mtime = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    fs.utimesSync(blob, mtime, mtime);
    fs.writeFileSync(path.join(docs, 'blank.md'), '   \n\n');
    const first = await ingest();
    expect(first.files.skipped).toEqual({ binary: 1, empty: 1 });
    expect(skippedFiles()).toEqual([
      { path: 'blank.md', reason: 'empty' },
      { path: 'blob.txt', reason: 'binary' },
    ]);
    // Text of the same size under the same mtime: only a run that reads the file can see it.
    fs.writeFileSync(blob, 'readable text ok\n');
    fs.utimesSync(blob, mtime, mtime);
    const second = await ingest();
    expect(second.files).toMatchObject({ added: 0, changed: 0, unchanged: first.files.added, skipped: { binary: 1, empty: 1 } });
    expect(counts().documents).toBe(first.files.added);
    // --checksum reads every file: now it is a document, and no longer recorded as skipped.
    const third = await ingest('--checksum');
    expect(third.files).toMatchObject({ added: 1, skipped: { empty: 1 } });
    expect(skippedFiles()).toEqual([{ path: 'blank.md', reason: 'empty' }]);
  });

  test('a skipped file that changes is read again, and one that is gone is forgotten', async () => {
    fs.writeFileSync(path.join(docs, 'blob.txt'), Buffer.from('binary\0data\n'));
    fs.writeFileSync(path.join(docs, 'blank.md'), '   \n\n');
    await ingest();
    fs.writeFileSync(path.join(docs, 'blank.md'), '# Not blank\n\nNow it holds a paragraph about webhooks.\n');
    fs.rmSync(path.join(docs, 'blob.txt'));
    const second = await ingest();
    expect(second.files).toMatchObject({ added: 1, skipped: {} });
    expect(skippedFiles()).toEqual([]);
    fs.writeFileSync(path.join(docs, 'blob.txt'), Buffer.from('binary\0data\n'));
    await ingest();
    expect(skippedFiles()).toEqual([{ path: 'blob.txt', reason: 'binary' }]);
    await ingest('--reindex');
    expect((await ingest()).files.skipped).toEqual({ binary: 1 });
    expectConsistent();
  });

  test('the same folder reached through a symlink is the same folder, not a second copy of it', async () => {
    const link = path.join(home, 'docs-link');
    fs.symlinkSync(docs, link);
    const first = await ragline(['ingest', link, '--json'], { env: isolatedEnv(home) });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).root).toBe(fs.realpathSync(docs));
    const again = await ingest();
    expect(again.files).toMatchObject({ added: 0, removed: 0, unchanged: JSON.parse(first.stdout).files.added });
    expectConsistent();

    // An index that stored the folder under the path it was given keeps being found there.
    const db = new Database(dbFile());
    db.prepare('UPDATE documents SET root = ?').run(link);
    db.close();
    const viaLink = await ragline(['ingest', link, '--json'], { env: isolatedEnv(home) });
    expect(JSON.parse(viaLink.stdout)).toMatchObject({ root: link, files: { added: 0, removed: 0 } });
  });

  test('--checksum hashes every file again and still finds nothing changed', async () => {
    const first = await ingest();
    const second = await ingest('--checksum');
    expect(second.files).toEqual({ added: 0, changed: 0, unchanged: first.files.added, removed: 0, skipped: {} });
    expect(second.chunks).toEqual({ written: 0, embedded: 0, reused: 0, removed: 0 });
  });

  test('a renamed file reuses its stored vectors: nothing embedded, its chunks reused', async () => {
    await ingest();
    const faqChunks = chunksOf('faq.md');
    fs.renameSync(path.join(docs, 'faq.md'), path.join(docs, 'questions.md'));
    const second = await ingest();
    expect(second.files).toMatchObject({ added: 1, removed: 1, changed: 0 });
    expect(second.chunks).toEqual({ written: faqChunks, embedded: 0, reused: faqChunks, removed: faqChunks });
    expectConsistent();
  });

  test('a duplicated file reuses the vectors of the original', async () => {
    const first = await ingest();
    const before = counts();
    const faqChunks = chunksOf('faq.md');
    fs.copyFileSync(path.join(docs, 'faq.md'), path.join(docs, 'faq-copy.md'));
    const second = await ingest();
    expect(second.files).toMatchObject({ added: 1, unchanged: first.files.added, removed: 0 });
    expect(second.chunks).toEqual({ written: faqChunks, embedded: 0, reused: faqChunks, removed: 0 });
    expect(counts().chunks).toBe(before.chunks + faqChunks);
    expectConsistent();
  });

  test('touching mtime without changing content re-hashes the file and leaves it unchanged', async () => {
    const first = await ingest();
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(docs, 'faq.md'), later, later);
    const second = await ingest();
    expect(second.files).toMatchObject({ added: 0, changed: 0, unchanged: first.files.added });
    expect(second.chunks.written).toBe(0);
    // the new mtime was recorded, so a third run does not even read the file
    const db = new Database(dbFile(), { readonly: true });
    const mtime = db.prepare("SELECT mtime_ms FROM documents WHERE path = 'faq.md'").pluck().get();
    db.close();
    expect(mtime).toBe(Math.trunc(fs.statSync(path.join(docs, 'faq.md')).mtimeMs));
  });

  test('--reindex drops the index and rebuilds it from scratch', async () => {
    const first = await ingest();
    const before = counts();
    const totalsBefore = ftsTotals();
    const rebuilt = await ingest('--reindex');
    expect(rebuilt.files).toMatchObject({ added: first.files.added, changed: 0, unchanged: 0 });
    expect(rebuilt.chunks.written).toBe(first.chunks.written);
    expect(rebuilt.chunks.embedded).toBe(first.chunks.embedded);
    const after = counts();
    expect(after).toEqual(before);
    expectConsistent(after);
    // The keyword index's totals (rows, tokens per column: what bm25 weighs by) are a
    // fresh index's, not the old rows counted again.
    expect(ftsTotals()).toEqual(totalsBefore);
  });

  test('a different chunk size stops with exit 2 and the --reindex hint, and changes nothing', async () => {
    await ingest();
    const before = counts();
    const result = await ragline(['ingest', docs, '--chunk-size', '777'], { env: isolatedEnv(home) });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/chunked with size \d+ .*size 777/);
    expect(result.stderr).toContain('--reindex');
    expect(counts()).toEqual(before);
    const rebuilt = await ingest('--chunk-size', '777', '--reindex');
    expect(rebuilt.chunks.written).toBeGreaterThan(0);
    expectConsistent();
  });

  test('a different embedder stops with exit 2 and the --reindex hint', async () => {
    await ingest();
    const before = counts();
    // a remote embedder, chosen explicitly, that is never contacted: the fingerprint check comes first
    // (left auto, the offline index would keep its own embedder: test/embedder-choice.test.ts)
    const env = isolatedEnv(home, {
      RAGLINE_EMBED_PROVIDER: 'openai',
      RAGLINE_BASE_URL: 'http://127.0.0.1:9/v1',
      RAGLINE_API_KEY: 'sk-unused',
      RAGLINE_EMBED_MODEL: 'other-model',
      RAGLINE_EMBED_DIMENSIONS: '384',
    });
    const result = await ragline(['ingest', docs], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/built with the embedder offline:/);
    expect(result.stderr).toContain('--reindex');
    expect(result.stderr).toContain('RAGLINE_EMBED_PROVIDER');
    expect(counts()).toEqual(before);
  });
});

describe('a folder read by an earlier version of the reader', () => {
  /** The index as an earlier version left it: no reader version recorded, and a chunk as that version read it. */
  function makeEarlier(): void {
    const db = new Database(dbFile());
    try {
      db.prepare("DELETE FROM meta WHERE key = 'ingest.reader'").run();
      db.prepare("UPDATE chunks SET text = 'read the old way' WHERE id = (SELECT min(id) FROM chunks)").run();
    } finally {
      db.close();
    }
  }
  const readerVersions = (): Record<string, number> => {
    const db = new Database(dbFile(), { readonly: true });
    try {
      const row = db.prepare("SELECT value FROM meta WHERE key = 'ingest.reader'").get() as { value: string } | undefined;
      return row ? (JSON.parse(row.value) as Record<string, number>) : {};
    } finally {
      db.close();
    }
  };
  const oldText = (): number => {
    const db = new Database(dbFile(), { readonly: true });
    try {
      return (db.prepare("SELECT count(*) AS n FROM chunks WHERE text = 'read the old way'").get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  test('is read again in full by the next ingest, keeping the vectors of unchanged chunks, and then recorded', async () => {
    const first = await ingest();
    const files = first.files.added;
    expect(Object.values(readerVersions())).toHaveLength(1);
    makeEarlier();

    const again = (await ingest()) as Summary & { reread?: boolean };
    expect(again.reread).toBe(true);
    expect(again.files).toMatchObject({ added: 0, changed: files, unchanged: 0, removed: 0 });
    expect(again.chunks).toMatchObject({ embedded: 0, reused: first.chunks.written }); // the same texts keep their vectors
    expect(oldText()).toBe(0);
    expect(Object.values(readerVersions())).toHaveLength(1);

    const third = (await ingest()) as Summary & { reread?: boolean };
    expect(third.reread).toBeUndefined();
    expect(third.files).toMatchObject({ changed: 0, unchanged: files });
  });

  test('one file ingested on its own is read again, and the folder stays to be read in full', async () => {
    await ingest();
    makeEarlier();
    const one = await ragline(['ingest', path.join(docs, 'faq.md'), '--json'], { env: isolatedEnv(home) });
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).not.toHaveProperty('reread'); // one file, not the folder
    expect(readerVersions()).toEqual({});
    const whole = (await ingest()) as Summary & { reread?: boolean };
    expect(whole.reread).toBe(true);
    expect(oldText()).toBe(0);
  });

  test('doctor names the folder to ingest again, until it is', async () => {
    await ingest();
    makeEarlier();
    const before = await ragline(['doctor'], { env: isolatedEnv(home) });
    expect(before.stdout).toMatch(/warn +reader +A folder was indexed by an earlier version of ragline, which read documents differently: .*docs\./);
    expect(before.stdout).toContain(`ragline ingest ${docs}`);
    await ingest();
    expect((await ragline(['doctor'], { env: isolatedEnv(home) })).stdout).not.toContain('reader');
  });

  test('a damaged record of reader versions reads every folder again once, and is written anew', async () => {
    await ingest();
    const db = new Database(dbFile());
    db.prepare("UPDATE meta SET value = '{not json' WHERE key = 'ingest.reader'").run();
    db.close();
    const again = (await ingest()) as Summary & { reread?: boolean };
    expect(again.reread).toBe(true);
    expect(Object.values(readerVersions())).toHaveLength(1);
  });

  test('the CLI says why every file was read again', async () => {
    await ingest();
    makeEarlier();
    const result = await ragline(['ingest', docs], { env: isolatedEnv(home) });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Every file was read again: the folder had been indexed by an earlier version of ragline');
  });
});
