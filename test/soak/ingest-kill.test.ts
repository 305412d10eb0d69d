// An ingest killed at any moment leaves a database that is whole: SQLite's
// integrity check passes and chunks, chunks_fts and vec_chunks hold the same rows
// (and documents.chunk_count adds up to them), and the next run finishes the job
// with the same result as a clean ingest. The built CLI runs as a real child
// process (build first: npx tsc -p .) over 600 generated Markdown files and is
// SIGKILLed after a random delay (fixed seed); between kills a seeded share of the
// files is edited, added or deleted so that every run has writing to do.
// Ctrl-C (SIGINT) ends the run with exit 130 and the "run again to finish" note;
// during the second of three paths, it stops there and names the third.

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, ROOT, isolatedEnv, ragline, tempDir } from '../helpers/cli.js';
import { prng } from '../helpers/prng.js';

const SEED = 0x5eed_2024;
const KILLS = 24;
const FILES = 600;
/** Small chunks so that one run writes several groups (a group is committed every 512 chunks). */
const CHUNK_FLAGS = ['--chunk-size', '200', '--chunk-overlap', '20'];

let home: string;
let docs: string;

function writeDoc(dir: string, i: number, version: number): void {
  const parts = Array.from(
    { length: 12 },
    (_, p) => `## Part ${p}\n\nParagraph ${p} of document ${i} (revision ${version}) covers topic-${(i * 7 + p + version) % 97} and widget-${i % 13}.\n`,
  );
  fs.writeFileSync(path.join(dir, `doc-${String(i).padStart(4, '0')}.md`), `# Document ${i}\n\n${parts.join('\n')}`);
}

interface Health {
  integrity: string;
  ftsIntegrity: string;
  documents: number;
  chunks: number;
  fts: number;
  vectors: number;
  chunkCountSum: number;
}

function health(dbFile: string): Health {
  const db = new Database(dbFile);
  sqliteVec.load(db);
  try {
    const one = (sql: string) => db.prepare(sql).pluck().get() as number;
    const hasVec = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'vec_chunks'").get() !== undefined;
    let ftsIntegrity = 'ok';
    try {
      db.prepare("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 0)").run();
    } catch (err) {
      ftsIntegrity = (err as Error).message;
    }
    return {
      integrity: (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join('; '),
      ftsIntegrity,
      documents: one('SELECT count(*) FROM documents'),
      chunks: one('SELECT count(*) FROM chunks'),
      fts: one('SELECT count(*) FROM chunks_fts'),
      vectors: hasVec ? one('SELECT count(*) FROM vec_chunks') : 0,
      chunkCountSum: one('SELECT coalesce(sum(chunk_count), 0) FROM documents'),
    };
  } finally {
    db.close();
  }
}

function expectWhole(h: Health, label: string): void {
  expect(h.integrity, label).toBe('ok');
  expect(h.ftsIntegrity, label).toBe('ok');
  expect(h.fts, label).toBe(h.chunks);
  expect(h.vectors, label).toBe(h.chunks);
  expect(h.chunkCountSum, label).toBe(h.chunks);
}

/** (path, content hash, chunk text hashes) for every document: what a database says about the folder. */
function contents(dbFile: string): string[] {
  const db = new Database(dbFile, { readonly: true });
  try {
    return (
      db
        .prepare(
          `SELECT d.path || ' ' || d.content_hash || ' ' || group_concat(c.text_hash, ',') AS row
           FROM documents d JOIN chunks c ON c.document_id = d.id GROUP BY d.id ORDER BY d.path`,
        )
        .pluck()
        .all() as string[]
    );
  } finally {
    db.close();
  }
}

/** Resolves once process `pid` holds the ingest lock (a killed run's stale lock does not count), or has ended. */
async function waitForLock(dbFile: string, pid: number, ended: Promise<unknown>): Promise<void> {
  let over = false;
  void ended.then(() => (over = true));
  while (!over) {
    if (fs.existsSync(dbFile)) {
      try {
        const db = new Database(dbFile, { readonly: true, fileMustExist: true });
        try {
          const lock = db.prepare("SELECT value FROM meta WHERE key = 'ingest.lock'").pluck().get() as string | undefined;
          if (lock && (JSON.parse(lock) as { pid: number }).pid === pid) return;
        } finally {
          db.close();
        }
      } catch {
        /* not migrated yet */
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function startIngest(env: NodeJS.ProcessEnv): { child: ChildProcess; done: Promise<{ code: number | null; signal: string | null; stderr: string }> } {
  const child = spawn(process.execPath, [BIN, 'ingest', docs, ...CHUNK_FLAGS], { env, cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, done };
}

beforeAll(() => {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
  home = tempDir('ragline-kill-');
  docs = path.join(home, 'docs');
  fs.mkdirSync(docs);
  for (let i = 0; i < FILES; i++) writeDoc(docs, i, 0);
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

describe('ingest killed mid-run', () => {
  test(`${KILLS} SIGKILLs at random moments (seed ${SEED.toString(16)}) never leave an inconsistent database, and a rerun matches a clean ingest`, async () => {
    const random = prng(SEED);
    const env = isolatedEnv(home);
    const dbFile = path.join(home, 'data', 'ragline', 'ragline.db');
    let version = 0;
    let midWrite = 0; // kills that landed after some files of the run were written and before it finished
    let finished = 0; // runs that completed before the kill
    const kills: string[] = [];
    // Calibrate: how long a typical run (edits as below) writes once it holds the
    // lock, so the kill delays spread over the writing however fast the machine is.
    let span: number;
    {
      version++;
      for (let n = 0; n < FILES / 2; n++) writeDoc(docs, Math.floor(random() * FILES), version);
      const run = startIngest(env);
      await waitForLock(dbFile, run.child.pid!, run.done);
      const locked = performance.now();
      const result = await run.done;
      expect(result.code, result.stderr).toBe(0);
      span = Math.max(50, performance.now() - locked);
    }
    for (let kill = 0; kill < KILLS; kill++) {
      // give every run something to write: edit a random share of about 40%, add and delete a few
      version++;
      for (let n = 0; n < FILES / 2; n++) writeDoc(docs, Math.floor(random() * FILES), version);
      for (let n = 0; n < 3; n++) writeDoc(docs, FILES + Math.floor(random() * 200), version);
      for (let n = 0; n < 3; n++) fs.rmSync(path.join(docs, `doc-${String(Math.floor(random() * FILES)).padStart(4, '0')}.md`), { force: true });

      const before = fs.existsSync(dbFile) ? contents(dbFile) : [];
      // every fourth kill counts from the spawn (20-400 ms: start-up, creating and
      // migrating the file); the others from the moment the run holds its ingest
      // lock (0 to the calibrated span: walking, chunking, writing groups, deleting)
      const fromSpawn = kill % 4 === 0;
      const delay = fromSpawn ? 20 + Math.floor(random() * 380) : Math.floor(random() * span);
      const run = startIngest(env);
      if (!fromSpawn) await waitForLock(dbFile, run.child.pid!, run.done);
      await new Promise((resolve) => setTimeout(resolve, delay));
      run.child.kill('SIGKILL');
      const result = await run.done;
      if (result.signal !== 'SIGKILL') {
        expect(result.code, result.stderr).toBe(0);
        finished++;
      }
      if (!fs.existsSync(dbFile)) continue; // killed before the file was created
      kills.push(`${fromSpawn ? 'spawn' : 'lock'}+${delay}ms${result.signal === 'SIGKILL' ? '' : ' (finished)'}`);
      const h = health(dbFile);
      expectWhole(h, `after kill ${kill} at ${delay} ms`);
      const after = contents(dbFile);
      if (result.signal === 'SIGKILL' && after.join('\n') !== before.join('\n')) midWrite++;
    }

    const rerun = await ragline(['ingest', docs, '--json', ...CHUNK_FLAGS], { env });
    expect(rerun.code, rerun.stderr).toBe(0);
    const final = health(dbFile);
    expectWhole(final, 'after the final rerun');

    const cleanHome = tempDir('ragline-clean-');
    try {
      const clean = await ragline(['ingest', docs, '--json', ...CHUNK_FLAGS], { env: isolatedEnv(cleanHome) });
      expect(clean.code, clean.stderr).toBe(0);
      const cleanDb = path.join(cleanHome, 'data', 'ragline', 'ragline.db');
      const reference = health(cleanDb);
      expect({ documents: final.documents, chunks: final.chunks, fts: final.fts, vectors: final.vectors }).toEqual({
        documents: reference.documents,
        chunks: reference.chunks,
        fts: reference.fts,
        vectors: reference.vectors,
      });
      expect(contents(dbFile)).toEqual(contents(cleanDb));
    } finally {
      fs.rmSync(cleanHome, { recursive: true, force: true });
    }
    console.log(
      `kill test: ${KILLS} kills over a ${Math.round(span)} ms write span, ${midWrite} landed mid-write, ${finished} runs finished first; final ${final.documents} documents, ${final.chunks} chunks\n${kills.join(' ')}`,
    );
    // the delays must actually interrupt writing, or this test proves nothing
    expect(midWrite).toBeGreaterThanOrEqual(5);
  }, 120_000);

  test('Ctrl-C (SIGINT) mid-ingest exits 130 with the "run again to finish" note and leaves a consistent database', async () => {
    const sigintHome = tempDir('ragline-sigint-');
    const big = path.join(sigintHome, 'docs');
    fs.mkdirSync(big);
    for (let i = 0; i < 3000; i++) writeDoc(big, i, 0);
    const env = isolatedEnv(sigintHome);
    const dbFile = path.join(sigintHome, 'data', 'ragline', 'ragline.db');
    try {
      const child = spawn(process.execPath, [BIN, 'ingest', big], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      let stdout = '';
      child.stdout!.on('data', (d) => (stdout += d));
      child.stderr!.on('data', (d) => (stderr += d));
      const done = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        child.on('close', (code, signal) => resolve({ code, signal })),
      );
      // wait until the ingest holds its lock (the SIGINT handler is installed by then)
      const deadline = Date.now() + 20_000;
      for (;;) {
        if (Date.now() > deadline) throw new Error('ingest never took its lock');
        if (fs.existsSync(dbFile)) {
          try {
            const db = new Database(dbFile, { readonly: true });
            const lock = db.prepare("SELECT value FROM meta WHERE key = 'ingest.lock'").pluck().get();
            db.close();
            if (lock) break;
          } catch {
            /* schema not there yet */
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // ... and has written its first documents: interrupted before any, a first ingest
      // leaves no database behind (e817178), which is not what this test is about.
      for (;;) {
        if (Date.now() > deadline) throw new Error('ingest never wrote a document');
        const db = new Database(dbFile, { readonly: true });
        const written = db.prepare('SELECT count(*) FROM documents').pluck().get() as number;
        db.close();
        if (written > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      child.kill('SIGINT');
      const result = await done;
      expect(result.code, stderr).toBe(130);
      expect(stderr).toContain('Interrupted: what was written is kept; run the same command again to finish.');
      expect(stdout).toMatch(/^Interrupted after \d+ added/);
      const h = health(dbFile);
      expectWhole(h, 'after SIGINT');
      expect(h.documents).toBeLessThan(3000);
      const lock = new Database(dbFile, { readonly: true }).prepare("SELECT value FROM meta WHERE key = 'ingest.lock'").pluck().get();
      expect(lock).toBeUndefined();

      const rerun = await ragline(['ingest', big, '--json'], { env });
      expect(rerun.code, rerun.stderr).toBe(0);
      const summary = JSON.parse(rerun.stdout);
      expect(summary.files.unchanged + summary.files.added).toBe(3000);
      expect(summary.files.unchanged).toBe(h.documents);
      expectWhole(health(dbFile), 'after the rerun');
    } finally {
      fs.rmSync(sigintHome, { recursive: true, force: true });
    }
  }, 60_000);

  test('Ctrl-C (SIGINT) during the second of three paths stops there: exit 130, the first kept and said, the third named as not ingested', async () => {
    const sigintHome = tempDir('ragline-sigint-');
    const [first, big, last] = ['first', 'big', 'last'].map((name) => path.join(sigintHome, name)) as [string, string, string];
    for (const dir of [first, big, last]) fs.mkdirSync(dir);
    writeDoc(first, 0, 0);
    for (let i = 0; i < 3000; i++) writeDoc(big, i, 0);
    writeDoc(last, 0, 0);
    const env = isolatedEnv(sigintHome);
    const dbFile = path.join(sigintHome, 'data', 'ragline', 'ragline.db');
    const documentsOf = (root: string) => {
      const db = new Database(dbFile, { readonly: true });
      try {
        return db.prepare('SELECT count(*) FROM documents WHERE root = ?').pluck().get(fs.realpathSync(root)) as number;
      } finally {
        db.close();
      }
    };
    try {
      const child = spawn(process.execPath, [BIN, 'ingest', first, big, last, ...CHUNK_FLAGS], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      let stdout = '';
      child.stdout!.on('data', (d) => (stdout += d));
      child.stderr!.on('data', (d) => (stderr += d));
      const done = new Promise<{ code: number | null }>((resolve) => child.on('close', (code) => resolve({ code })));
      // wait until the second path's first documents are written
      const deadline = Date.now() + 20_000;
      for (;;) {
        if (Date.now() > deadline) throw new Error('the second path was never written');
        try {
          if (fs.existsSync(dbFile) && documentsOf(big) > 0) break;
        } catch {
          /* schema not there yet */
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      child.kill('SIGINT');
      const result = await done;
      expect(result.code, stderr).toBe(130);
      expect(stdout.split('\n')).toEqual([
        expect.stringMatching(new RegExp(`^Ingested ${first}: 1 added, `)),
        expect.stringMatching(new RegExp(`^Interrupted ${big} after \\d+ added, `)),
        expect.stringMatching(/^Total for 2 paths \(interrupted\): \d+ added, /),
        '',
      ]);
      expect(stderr).toBe(`Interrupted: what was written is kept; run the same command again to finish.\nNot ingested: ${last}.\n`);
      expectWhole(health(dbFile), 'after SIGINT');
      expect(documentsOf(first)).toBe(1);
      expect(documentsOf(big)).toBeLessThan(3000);
      expect(documentsOf(last)).toBe(0);

      const rerun = await ragline(['ingest', first, big, last, '--json', ...CHUNK_FLAGS], { env });
      expect(rerun.code, rerun.stderr).toBe(0);
      const summary = JSON.parse(rerun.stdout);
      expect(summary.paths.map((entry: { files: { added: number; unchanged: number } }) => entry.files.added + entry.files.unchanged)).toEqual([1, 3000, 1]);
      expect(summary.notIngested).toEqual([]);
      expect(documentsOf(last)).toBe(1);
    } finally {
      fs.rmSync(sigintHome, { recursive: true, force: true });
    }
  }, 60_000);
});
