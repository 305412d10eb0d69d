// Ingest when things go wrong under it. Failing while the embedder still has a
// batch out on its worker thread: the error is printed and the exit code is
// meaningful (before, the batch that came back while the worker was being
// stopped let the event loop empty, and Node quit with code 13 and no message).
// Ctrl-C during the last file or the last group: the run says it was interrupted
// and removes nothing (before, it reported success, exit 0, having dropped the
// last group). A FIFO put in place of a file after the listing, a race between
// processes, is in test/soak/ingest-fifo.test.ts.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { BIN, ROOT, isolatedEnv, ragline, tempDir } from './helpers/cli.js';

let home: string;
beforeEach(() => {
  home = tempDir();
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

test('the writer throwing with an embedding batch in flight prints the error and exits 1, never 13', async () => {
  const env = isolatedEnv(home);
  const dbFile = path.join(home, 'r.db');
  const docs = path.join(home, 'docs');
  fs.mkdirSync(docs);
  fs.writeFileSync(path.join(docs, 'first.md'), '# First\n\nThe first document.\n');
  const made = await ragline(['--db', dbFile, 'ingest', docs], { env });
  expect(made.code, made.stderr).toBe(0);
  // Enough new chunks for several groups of 512, so the first write happens while
  // the next group is being embedded on the worker.
  for (let i = 0; i < 200; i++) {
    const sections = Array.from({ length: 8 }, (_, s) => `## Part ${s}\n\n${`Section ${s} of file ${i} on widget-${(i * 7 + s) % 31}. `.repeat(30)}\n`);
    fs.writeFileSync(path.join(docs, `f${i}.md`), `# File ${i}\n\n${sections.join('\n')}`);
  }

  // Another "ingest" (this test process, alive) takes the lock in a transaction it
  // commits only after the ingest below has checked for one at its start: the
  // ingest then meets the lock at its first write, with a batch on the worker.
  const holder = new Database(dbFile);
  holder.pragma('busy_timeout = 10000');
  holder.exec('BEGIN IMMEDIATE');
  holder
    .prepare("INSERT INTO meta (key, value) VALUES ('ingest.lock', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
    .run(JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() }));
  // --no-wait: refused at its first write (waiting is test/ingest-wait.test.ts).
  const child = spawn(process.execPath, [BIN, '--db', dbFile, 'ingest', docs, '--no-wait'], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  holder.exec('COMMIT');
  holder.close();

  const code = await done;
  expect(stderr).toMatch(new RegExp(`^error: Another ingest \\(pid ${process.pid}, started [^)]+\\) is writing to this database\\.$`, 'm'));
  expect(code, stderr).toBe(1);
}, 60_000);

test('Ctrl-C (the abort signal) does not wait for a group still being embedded: the ingest stops and reports itself interrupted', async () => {
  const { ingest } = await import('../src/ingest/ingest.js');
  const { openDatabase } = await import('../src/store/db.js');
  const docs = path.join(home, 'docs');
  fs.mkdirSync(docs);
  for (let i = 0; i < 60; i++) {
    const sections = Array.from({ length: 30 }, (_, s) => `## Part ${s}\n\n${`Section ${s} of file ${i}. `.repeat(20)}\n`);
    fs.writeFileSync(path.join(docs, `f${i}.md`), `# File ${i}\n\n${sections.join('\n')}`);
  }
  // An embedder that never answers and ignores the signal, as a worker thread busy
  // with a large group does for a while.
  const embedCalls: number[] = [];
  const embedder = {
    id: 'test:never',
    dimensions: 8,
    maxBatch: 10_000,
    embed: (texts: string[]) => {
      embedCalls.push(texts.length);
      return new Promise<Float32Array[]>(() => {});
    },
  };
  const db = openDatabase(':memory:');
  const controller = new AbortController();
  try {
    const run = ingest({ root: docs, db, embedder, chunker: { size: 600, overlap: 0 }, maxFileBytes: 1e7, signal: controller.signal });
    // Abort once the second group is out, so the first is being waited for.
    for (let waited = 0; embedCalls.length < 2; waited += 5) {
      if (waited > 10_000) throw new Error(`only ${embedCalls.length} groups were handed to the embedder`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    controller.abort();
    const summary = await Promise.race([run, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 5000))]);
    expect(summary).not.toBe('hung');
    expect(summary !== 'hung' && summary.interrupted).toBe(true);
    expect(summary !== 'hung' && summary.files.added).toBe(0); // nothing half-written
  } finally {
    db.close();
  }
});

describe('Ctrl-C at the end of a run', () => {
  /** An index of keep.md and gone.md; then gone.md is deleted and new.md written, so the next run has one file to add and one document to remove. */
  async function indexToUpdate() {
    const { ingest } = await import('../src/ingest/ingest.js');
    const { openDatabase } = await import('../src/store/db.js');
    const docs = path.join(home, 'docs');
    fs.mkdirSync(docs);
    fs.writeFileSync(path.join(docs, 'keep.md'), '# Keep\n\nA document that stays.\n');
    fs.writeFileSync(path.join(docs, 'gone.md'), '# Gone\n\nA document whose file is deleted.\n');
    const db = openDatabase(':memory:');
    const vectors = (texts: string[]) => texts.map(() => Float32Array.from({ length: 8 }, (_, i) => (i === 0 ? 1 : 0)));
    const embedder = { id: 'test:fixed', dimensions: 8, maxBatch: 10_000, embed: async (texts: string[]) => vectors(texts) };
    const options = { root: docs, db, chunker: { size: 600, overlap: 0 }, maxFileBytes: 1e7 };
    expect((await ingest({ ...options, embedder })).files.added).toBe(2);
    fs.rmSync(path.join(docs, 'gone.md'));
    fs.writeFileSync(path.join(docs, 'new.md'), '# New\n\nA document added since.\n');
    const stored = () => (db.prepare('SELECT path FROM documents ORDER BY path').pluck().all() as string[]).join(' ');
    return { ingest, db, options, vectors, stored };
  }

  test('a Ctrl-C while the last group is embedded is reported: the run is interrupted, and the document of the deleted file stays', async () => {
    const { ingest, db, options, vectors, stored } = await indexToUpdate();
    const controller = new AbortController();
    // The signal fires while the embedder works on the run's only group, and the vectors come after it.
    const embedder = {
      id: 'test:fixed',
      dimensions: 8,
      maxBatch: 10_000,
      embed: (texts: string[]) => {
        controller.abort();
        return new Promise<Float32Array[]>((resolve) => setTimeout(() => resolve(vectors(texts)), 10));
      },
    };
    try {
      const summary = await ingest({ ...options, embedder, signal: controller.signal });
      expect(summary.interrupted).toBe(true);
      expect(summary.files).toMatchObject({ added: 0, removed: 0 });
      expect(stored()).toBe('gone.md keep.md');
    } finally {
      db.close();
    }
  });

  test('a Ctrl-C delivered once the last file is read (reading never lets the event loop run) stops the run before it writes or removes anything', async () => {
    const { ingest, db, options, vectors, stored } = await indexToUpdate();
    const controller = new AbortController();
    const embedCalls: number[] = [];
    const embedder = {
      id: 'test:fixed',
      dimensions: 8,
      maxBatch: 10_000,
      embed: async (texts: string[]) => {
        embedCalls.push(texts.length);
        return vectors(texts);
      },
    };
    try {
      // As a signal received while the main thread reads a file: handled at the event loop's next turn.
      setImmediate(() => controller.abort());
      const summary = await ingest({ ...options, embedder, signal: controller.signal });
      expect(summary.interrupted).toBe(true);
      expect(summary.files).toMatchObject({ added: 0, removed: 0 });
      expect(embedCalls).toEqual([]);
      expect(stored()).toBe('gone.md keep.md');
    } finally {
      db.close();
    }
  });
});

describe('an interrupted first ingest', () => {
  test('records the reader its documents were read with: the next run adds the files it did not reach and reads none again', async () => {
    const { ingest } = await import('../src/ingest/ingest.js');
    const { openDatabase } = await import('../src/store/db.js');
    const docs = path.join(home, 'docs');
    fs.mkdirSync(docs);
    // Three groups of chunks (a group is 512): the signal fires while the second is embedded.
    for (let i = 0; i < 1200; i++) fs.writeFileSync(path.join(docs, `page-${String(i).padStart(4, '0')}.md`), `# Page ${i}\n\nText of page ${i}.\n`);
    const db = openDatabase(':memory:');
    const vector = () => Float32Array.from({ length: 8 }, (_, i) => (i === 0 ? 1 : 0));
    const controller = new AbortController();
    let calls = 0;
    const embedder = {
      id: 'test:fixed',
      dimensions: 8,
      maxBatch: 10_000,
      embed: async (texts: string[]) => {
        if (++calls === 2) controller.abort();
        return texts.map(vector);
      },
    };
    const options = { root: docs, db, embedder, chunker: { size: 600, overlap: 0 }, maxFileBytes: 1e7 };
    try {
      const first = await ingest({ ...options, signal: controller.signal });
      expect(first.interrupted).toBe(true);
      const kept = first.files.added;
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(1200);
      const next = await ingest(options);
      expect(next.reread).toBeUndefined();
      expect(next.files).toMatchObject({ added: 1200 - kept, changed: 0, unchanged: kept });
    } finally {
      db.close();
    }
  });
});
