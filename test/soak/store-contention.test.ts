// Two processes on one database file at once, many times over: two ingests
// started together on a new database, a second ingest while the first writes,
// and opening or reading a database while another process changes its schema
// in a loop. Real child processes of the built CLI on real files in temp dirs.
// The single-process cases of the database file are in test/store.test.ts.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { loadHistory } from '../../src/chat/stages/history.js';
import { sqliteTurnStore } from '../../src/chat/stages/store.js';
import { termShares } from '../../src/retrieve/term-stats.js';
import { openDatabase } from '../../src/store/db.js';
import { BIN, FIXTURE_DOCS, ROOT, isolatedEnv, ragline, runCli, tempDir } from '../helpers/cli.js';

let home: string;
const env = () => isolatedEnv(home);
const defaultDb = () => path.join(home, 'data', 'ragline', 'ragline.db');

beforeAll(() => {
  if (!fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
});
beforeEach(() => {
  home = tempDir();
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

function health(file: string) {
  const db = new Database(file);
  sqliteVec.load(db);
  try {
    const one = (sql: string) => db.prepare(sql).pluck().get() as number;
    return {
      integrity: db.pragma('integrity_check', { simple: true }),
      chunks: one('SELECT count(*) FROM chunks'),
      fts: one('SELECT count(*) FROM chunks_fts'),
      vectors: one('SELECT count(*) FROM vec_chunks'),
      chunkCountSum: one('SELECT coalesce(sum(chunk_count), 0) FROM documents'),
      documents: one('SELECT count(*) FROM documents'),
    };
  } finally {
    db.close();
  }
}

describe('two ingests on one database', () => {
  test('started together on a new database: the second waits for the first and both finish, and nothing is corrupted (8 rounds)', async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < 8; round++) {
      const db = path.join(home, `pair-${round}.db`);
      const [a, b] = await Promise.all([runCli(['--db', db, 'ingest', FIXTURE_DOCS], { env: env() }), runCli(['--db', db, 'ingest', FIXTURE_DOCS], { env: env() })]);
      expect(a.code, a.stderr).toBe(0);
      expect(b.code, b.stderr).toBe(0);
      outcomes.push(`${a.code}/${b.code}${/Waiting for another ingest/.test(a.stderr + b.stderr) ? ' (waited)' : ''}`);
      const h = health(db);
      expect(h.integrity).toBe('ok');
      expect(h.documents).toBe(16);
      expect([h.fts, h.vectors, h.chunkCountSum]).toEqual([h.chunks, h.chunks, h.chunks]);
    }
    console.log(`fresh-database pairs (exit codes): ${outcomes.join(' ')}`);
  }, 120_000);

  test('an ingest of another folder while the first is writing waits for it, naming its pid, and both finish', async () => {
    const big = path.join(home, 'big');
    fs.mkdirSync(big);
    for (let i = 0; i < 2000; i++) fs.writeFileSync(path.join(big, `d${i}.md`), `# Doc ${i}\n\nBody of document ${i} about gadget-${i % 17}.\n`);
    const first = spawn(process.execPath, [BIN, 'ingest', big], { env: env(), cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let firstErr = '';
    first.stderr!.on('data', (d) => (firstErr += d));
    const firstDone = new Promise<number | null>((resolve) => first.on('close', (code) => resolve(code)));
    // wait until the first holds the lock
    for (let waited = 0; ; waited += 10) {
      if (waited > 20_000) throw new Error('first ingest never took the lock');
      try {
        const db = new Database(defaultDb(), { readonly: true, fileMustExist: true });
        const lock = db.prepare("SELECT value FROM meta WHERE key = 'ingest.lock'").pluck().get() as string | undefined;
        db.close();
        if (lock && JSON.parse(lock).pid === first.pid) break;
      } catch {
        /* not there yet */
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const second = await runCli(['ingest', FIXTURE_DOCS], { env: env(), timeoutMs: 120_000 });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain(`Waiting for another ingest writing to this database to finish (pid ${first.pid}, started `);
    expect(await firstDone, firstErr).toBe(0);
    const h = health(defaultDb());
    expect(h.integrity).toBe('ok');
    expect(h.documents).toBe(2016);
    expect([h.fts, h.vectors, h.chunkCountSum]).toEqual([h.chunks, h.chunks, h.chunks]);
  }, 120_000);
});

/**
 * A process creating and dropping a table in a loop on `file` (schema changes one after
 * another), once it has committed its first; `stop()` ends it and returns how many schema
 * changes it committed since it started.
 */
async function changeSchemaInLoop(file: string): Promise<{ stop: () => number }> {
  const schemaVersion = () => {
    const db = new Database(file, { readonly: true });
    try {
      return db.pragma('schema_version', { simple: true }) as number;
    } finally {
      db.close();
    }
  };
  const churn = `const D = require('better-sqlite3'); const db = new D(${JSON.stringify(file)}); db.pragma('busy_timeout = 10000');
    for (;;) { db.exec('CREATE TABLE churn (x)'); db.exec('DROP TABLE churn'); }`;
  const writer = spawn(process.execPath, ['-e', churn], { cwd: ROOT, stdio: 'ignore' });
  try {
    const before = schemaVersion();
    for (let waited = 0; schemaVersion() === before; waited += 10) {
      if (waited > 10_000) throw new Error('the schema-changing process never committed');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } catch (err) {
    writer.kill();
    throw err;
  }
  const start = schemaVersion();
  return {
    stop: () => {
      const changes = schemaVersion() - start;
      writer.kill();
      return changes;
    },
  };
}

describe('opening a database while another process changes its schema', () => {
  // PRAGMA quick_check connects the FTS5 table, whose constructor reads the index
  // with a read of its own. Against a schema read in an earlier snapshot it failed
  // with `vtable constructor failed: chunks_fts` (or `database schema has changed`)
  // when the other process committed schema changes one after another.
  test('the checks before the first write read one snapshot: 200 opens, none fails', async () => {
    const file = path.join(home, 'churn.db');
    openDatabase(file, { create: true }).close();
    const churn = await changeSchemaInLoop(file);
    const failures: string[] = [];
    let changes: number;
    try {
      for (let i = 0; i < 200; i++) {
        try {
          openDatabase(file).close();
        } catch (err) {
          failures.push(String((err as Error).message));
        }
      }
    } finally {
      changes = churn.stop();
    }
    // The other process kept changing the schema all along.
    expect(changes).toBeGreaterThan(200);
    expect(failures).toEqual([]);
  }, 60_000);

  // A chat holds its connection open for the whole session. Its searches read in one
  // read transaction; its history and the term statistics the offline rewriter asks
  // for were read one statement at a time, and a statement on its own failed with
  // `database schema has changed` while the other process kept changing the schema
  // (of 1000 reads: 13-18 of the history, 2-3 of the term statistics).
  test("a long-lived connection reads a turn's history and term statistics: 2000 reads of each, none fails", async () => {
    const ingest = await ragline(['ingest', FIXTURE_DOCS], { env: env() });
    expect(ingest.code, ingest.stderr).toBe(0);
    const db = openDatabase(defaultDb());
    const churn = await changeSchemaInLoop(defaultDb());
    const failures = new Map<string, number>();
    let changes: number;
    try {
      for (let i = 0; i < 2000; i++) {
        for (const read of [() => loadHistory(sqliteTurnStore(db), 'no-such-session', 5, { tokenBudget: 1000 }), async () => termShares(db)(`webhook${i}`)]) {
          try {
            await read();
          } catch (err) {
            const message = String((err as Error).message);
            failures.set(message, (failures.get(message) ?? 0) + 1);
          }
        }
      }
    } finally {
      changes = churn.stop();
      db.close();
    }
    expect(changes).toBeGreaterThan(2000);
    expect(Object.fromEntries(failures)).toEqual({});
  }, 60_000);
});
