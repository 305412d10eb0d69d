// One ingest writes to a database at a time (the ingest lock). A second one, of
// another folder, waits for the first, saying so with its pid, and then finishes;
// the wait is bounded (--wait <seconds>), and --no-wait refuses at once as before.
// The ingest "writing" here is this test process holding the lock, released when
// the test chooses (from a child process: an ingest in this process would take the
// lock of its own pid for its own). The real race of two ingests is in test/soak/store-contention.test.ts.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { BIN, ROOT, isolatedEnv, ragline, runCli, tempDir } from './helpers/cli.js';

let home: string;
let dbFile: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  home = tempDir('ragline-ingest-wait-');
  dbFile = path.join(home, 'r.db');
  env = isolatedEnv(home);
  for (const name of ['a', 'b']) {
    fs.mkdirSync(path.join(home, name));
    fs.writeFileSync(path.join(home, name, `${name}.md`), `# Folder ${name}\n\nThe document of folder ${name}, about widget-${name}.\n`);
  }
  const first = await ragline(['--db', dbFile, 'ingest', path.join(home, 'a')], { env });
  expect(first.code, first.stderr).toBe(0);
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

/** Records the ingest lock as held by this (live) process, as an ingest that is writing does. */
function holdLock(): void {
  const db = new Database(dbFile);
  db.prepare("INSERT INTO meta (key, value) VALUES ('ingest.lock', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(
    JSON.stringify({ pid: process.pid, startedAt: '2026-01-01T00:00:00.000Z' }),
  );
  db.close();
}

function releaseLock(): void {
  const db = new Database(dbFile);
  db.prepare("DELETE FROM meta WHERE key = 'ingest.lock'").run();
  db.close();
}

function documents(): string[] {
  const db = new Database(dbFile, { readonly: true });
  try {
    return db.prepare('SELECT path FROM documents ORDER BY path').pluck().all() as string[];
  } finally {
    db.close();
  }
}

/** `ragline ingest` as a child process whose stderr can be watched while it runs. */
function startIngest(args: string[]) {
  const child = spawn(process.execPath, [BIN, '--db', dbFile, 'ingest', ...args], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    exited,
    stderr: () => stderr,
    async saw(text: string): Promise<void> {
      for (let waited = 0; !stderr.includes(text); waited += 20) {
        if (waited > 30_000) throw new Error(`never said "${text}"; stderr:\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

const WAITING = `Waiting for another ingest writing to this database to finish (pid ${process.pid}, started 2026-01-01T00:00:00.000Z)`;

test('a second ingest of another folder waits for the one writing, saying so with its pid, and finishes when it is done', async () => {
  holdLock();
  const second = startIngest([path.join(home, 'b'), '--wait', '60']);
  await second.saw(WAITING);
  expect(second.stderr()).toContain(': up to 60 s; --wait <seconds> sets how long, --no-wait refuses at once.');
  // Still waiting a moment later: nothing of b written.
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(documents()).toEqual(['a.md']);
  releaseLock();
  expect(await second.exited, second.stderr()).toBe(0);
  expect(documents()).toEqual(['a.md', 'b.md']);
});

test('the wait is bounded: after --wait seconds it refuses naming the other ingest, with nothing written; --no-wait refuses at once', async () => {
  holdLock();
  const bounded = startIngest([path.join(home, 'b'), '--wait', '1']);
  expect(await bounded.exited).toBe(1);
  expect(bounded.stderr()).toContain(WAITING);
  expect(bounded.stderr()).toContain(`error: Another ingest (pid ${process.pid}, started 2026-01-01T00:00:00.000Z) is still writing to this database after a wait of 1 s; nothing was written.`);
  expect(bounded.stderr()).toContain('--wait <seconds>');

  const refused = await runCli(['--db', dbFile, 'ingest', path.join(home, 'b'), '--no-wait'], { env });
  expect(refused.code).toBe(1);
  expect(refused.stderr).not.toContain('Waiting for another ingest');
  expect(refused.stderr).toMatch(new RegExp(`^error: Another ingest \\(pid ${process.pid}, started [^)]+\\) is writing to this database\\.$`, 'm'));
  expect(documents()).toEqual(['a.md']);

  const bad = await ragline(['--db', dbFile, 'ingest', path.join(home, 'b'), '--wait', 'soon'], { env });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--wait must be a number of seconds from 0 to 86,400, got "soon".');
});

test('an ingest of the same folder that another changed while this one read it waits, reads the folder again and finishes', async () => {
  fs.writeFileSync(path.join(home, 'a', 'a.md'), '# Folder a\n\nThe document of folder a, edited: about gizmo-a now.\n');
  // "Another ingest of a": takes the lock and changes a's stored document in a
  // transaction committed only after the ingest below has listed the folder.
  const holder = new Database(dbFile);
  holder.pragma('busy_timeout = 10000');
  holder.exec('BEGIN IMMEDIATE');
  holder.prepare("INSERT INTO meta (key, value) VALUES ('ingest.lock', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(
    JSON.stringify({ pid: process.pid, startedAt: '2026-01-01T00:00:00.000Z' }),
  );
  holder.prepare("UPDATE documents SET size = size + 1, mtime_ms = mtime_ms + 1 WHERE path = 'a.md'").run();
  const again = startIngest([path.join(home, 'a'), '--wait', '60']);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  holder.exec('COMMIT');
  holder.close();
  await again.saw(WAITING);
  releaseLock();
  expect(await again.exited, again.stderr()).toBe(0);
  expect(again.stderr()).not.toContain('changed the documents of this folder');
  const db = new Database(dbFile, { readonly: true });
  const text = db.prepare("SELECT group_concat(c.text) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.path = 'a.md'").pluck().get() as string;
  db.close();
  expect(text).toContain('gizmo-a');
});
