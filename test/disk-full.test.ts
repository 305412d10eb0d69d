// A full disk mid-ingest: a clear message, a non-zero exit, a consistent
// database, and the same command finishing once there is room. Needs a small
// tmpfs (mount, as root); where that is not possible the test is skipped and says why.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FIXTURE_DOCS, isolatedEnv, runCli, tempDir } from './helpers/cli.js';

let home: string;
let mountPoint: string;
let mounted = false;
let why = '';

function mount(size: string): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mountPoint], { stdio: 'pipe' });
}

beforeAll(() => {
  home = tempDir();
  mountPoint = path.join(home, 'small-disk');
  fs.mkdirSync(mountPoint);
  try {
    mount('800k');
    mounted = true;
  } catch (err) {
    why = `cannot mount a small tmpfs here (${String((err as Error).message).split('\n')[0]})`;
  }
});

afterAll(() => {
  if (mounted) execFileSync('umount', [mountPoint]);
  fs.rmSync(home, { recursive: true, force: true });
});

function tableCounts(file: string) {
  const db = new Database(file, { readonly: true });
  sqliteVec.load(db);
  try {
    const one = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    return {
      integrity: db.pragma('integrity_check', { simple: true }),
      chunks: one('SELECT count(*) AS n FROM chunks'),
      fts: one('SELECT count(*) AS n FROM chunks_fts'),
      vectors: one('SELECT count(*) AS n FROM vec_chunks'),
    };
  } finally {
    db.close();
  }
}

describe('a full disk', () => {
  test('stops ingest with a clear message and a consistent database; with room, the same command finishes', async (ctx) => {
    if (!mounted) ctx.skip(why);
    const env = isolatedEnv(home);
    const dbFile = path.join(mountPoint, 'ragline.db');
    const full = await runCli(['--db', dbFile, 'ingest', FIXTURE_DOCS], { env });
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(/disk holding the database is full/);
    expect(full.stderr).toMatch(/Free some space and run the same command again/);
    expect(full.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace

    // more room: the same command completes and the index agrees with itself
    execFileSync('mount', ['-o', 'remount,size=64m', mountPoint]);
    const again = await runCli(['--db', dbFile, 'ingest', FIXTURE_DOCS, '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
    const counts = tableCounts(dbFile);
    expect(counts.integrity).toBe('ok');
    expect(counts.fts).toBe(counts.chunks);
    expect(counts.vectors).toBe(counts.chunks);
    expect(counts.chunks).toBeGreaterThan(0);
  });
});
