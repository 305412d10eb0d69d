// A full disk mid-ingest: a clear message, a non-zero exit, a consistent
// database, and the same command finishing once there is room. Needs a small
// tmpfs (mount, as root); where that is not possible the test is skipped and says why.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FIXTURE_DOCS, isolatedEnv, ragline, runCli, tempDir } from '../helpers/cli.js';

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

  test('a full disk where no -shm can be made: says the disk may be full and what to do; the file is left as it was', async (ctx) => {
    if (!mounted) ctx.skip(why);
    const env = isolatedEnv(home);
    const made = path.join(home, 'made.db');
    expect((await ragline(['--db', made, 'ingest', FIXTURE_DOCS], { env })).code).toBe(0);
    const size = fs.statSync(made).size;
    execFileSync('mount', ['-o', `remount,size=${Math.ceil(size / 4096) * 4096 + 64 * 1024}`, mountPoint]);
    for (const name of fs.readdirSync(mountPoint)) fs.rmSync(path.join(mountPoint, name), { force: true });
    const dbFile = path.join(mountPoint, 'copy.db');
    fs.copyFileSync(made, dbFile);
    try {
      fs.writeFileSync(path.join(mountPoint, 'filler'), Buffer.alloc(1024 * 1024));
    } catch {
      /* ENOSPC: the disk is full now, as wanted */
    }
    const sha = () => createHash('sha256').update(fs.readFileSync(dbFile)).digest('hex');
    const before = sha();
    for (const args of [['stats'], ['search', 'webhooks'], ['ingest', FIXTURE_DOCS]]) {
      const result = await runCli(['--db', dbFile, ...args], { env });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(1);
      expect(result.stderr).toContain(`error: The disk holding ${dbFile} may be full: SQLite could not make room for its copy.db-shm file`);
      expect(result.stderr).toContain('Free some space on that disk');
      expect(result.stderr).not.toContain('disk I/O error');
    }
    expect(sha()).toBe(before);
    expect(fs.existsSync(dbFile + '-wal') || fs.existsSync(dbFile + '-shm')).toBe(false);
  });
});
