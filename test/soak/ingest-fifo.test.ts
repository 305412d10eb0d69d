// Ingest when the folder changes under it: files replaced by FIFOs after the
// listing, 300 of 3000 at once while the built CLI runs as a child process, are
// skipped and counted, never read (before, the read blocked forever and Ctrl-C
// could not stop it). The other failures of an ingest are in
// test/ingest-failure.test.ts.

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { BIN, ROOT, isolatedEnv, ragline, tempDir } from '../helpers/cli.js';

let home: string;
beforeEach(() => {
  home = tempDir();
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

test('FIFOs that replace files after the listing are skipped and counted, never read; FIFOs there at the start are counted too', async () => {
  const env = isolatedEnv(home);
  const dbFile = path.join(home, 'r.db');
  const docs = path.join(home, 'docs');
  fs.mkdirSync(docs);
  fs.writeFileSync(path.join(docs, 'first.md'), '# First\n\nThe first document.\n');
  // An index exists, so the ingest below takes its lock at its first write, after the listing.
  expect((await ragline(['--db', dbFile, 'ingest', docs], { env })).code).toBe(0);
  const FILES = 3000;
  const name = (i: number) => path.join(docs, `f${String(i).padStart(4, '0')}.md`);
  for (let i = 0; i < FILES; i++) fs.writeFileSync(name(i), `# File ${i}\n\nAbout gadget-${i % 97} and sprocket-${i % 89}.\n`);
  execFileSync('mkfifo', [path.join(docs, 'pipe-at-start.md')]);

  const child = spawn(process.execPath, [BIN, '--db', dbFile, 'ingest', docs, '--json'], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // Once it holds its lock it has listed the folder: the last 300 files become FIFOs.
  for (let waited = 0; ; waited += 5) {
    if (waited > 20_000) throw new Error('the ingest never took its lock');
    const db = new Database(dbFile, { readonly: true });
    const lock = db.prepare("SELECT value FROM meta WHERE key = 'ingest.lock'").pluck().get() as string | undefined;
    db.close();
    if (lock && JSON.parse(lock).pid === child.pid) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const swapped = Array.from({ length: 300 }, (_, k) => name(FILES - 300 + k));
  for (const file of swapped) fs.unlinkSync(file);
  execFileSync('mkfifo', swapped);

  const code = await done;
  clearTimeout(killer);
  expect(code, stderr).toBe(0);
  const summary = JSON.parse(stdout);
  const notAFile = summary.files.skipped['not-a-file'] ?? 0;
  // The FIFO there at the start, and the swapped ones the run had not read yet (or,
  // in the moment between unlink and mkfifo, found missing: unreadable).
  expect(notAFile).toBeGreaterThanOrEqual(2);
  expect(summary.skippedPaths['not-a-file']).toContain('pipe-at-start.md');
  expect(summary.files.added + notAFile + (summary.files.skipped.unreadable ?? 0)).toBe(FILES + 1);
}, 60_000);

