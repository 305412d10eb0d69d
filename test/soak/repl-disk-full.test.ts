// The chat on a disk that fills up while it runs: every write that fails (a turn,
// /good, /expect) is reported in the CLI's words for a full disk, the chat reads the
// next line, nothing is stored half, and once there is room the same chat stores
// again. The REPL in a real pseudo-terminal, and the piped chat. Needs a small tmpfs
// (mount, as root); where that is not possible the tests are skipped and say why.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { BIN, isolatedEnv, runCli, tempDir, writeTinyDocs } from '../helpers/cli.js';
import { KEY, ptyUnavailable, spawnRaglineInPty, type PtySession } from '../helpers/pty.js';

const PROMPT = '› ';
const FULL = 'The disk holding the database is full; the last write was rolled back and nothing is half-written.';

let home: string;
let docs: string;
let mountPoint: string;
let mounted = false;
let why = ptyUnavailable() ?? '';
const sessions: PtySession[] = [];

beforeAll(() => {
  home = tempDir('ragline-repl-full-');
  docs = writeTinyDocs();
  mountPoint = path.join(home, 'small-disk');
  fs.mkdirSync(mountPoint);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mountPoint], { stdio: 'pipe' });
    mounted = true;
  } catch (err) {
    why ||= `cannot mount a small tmpfs here (${String((err as Error).message).split('\n')[0]})`;
  }
});

afterEach(() => {
  for (const session of sessions.splice(0)) session.kill();
});

afterAll(() => {
  if (mounted) execFileSync('umount', ['-l', mountPoint]);
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(docs, { recursive: true, force: true });
});

/** Fills the disk: a file grown until the disk refuses more. */
function fill(file: string): void {
  const block = Buffer.alloc(4096, 1);
  const fd = fs.openSync(file, 'w');
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    fs.closeSync(fd);
  }
}

async function say(pty: PtySession, line: string): Promise<string> {
  pty.type(line + KEY.enter);
  await pty.expect(line);
  return pty.expect(PROMPT);
}

function rows(dbFile: string) {
  const db = new Database(dbFile, { readonly: true });
  try {
    return {
      integrity: db.pragma('integrity_check', { simple: true }),
      turns: db.prepare('SELECT question, status FROM turns ORDER BY id').all() as { question: string; status: string }[],
      relevant: db.prepare('SELECT document_path FROM turn_relevant ORDER BY rowid').pluck().all() as string[],
    };
  } finally {
    db.close();
  }
}

describe('a disk that fills up under a chat', () => {
  it('the REPL reports each failed write as the CLI does and reads the next line; with room again it stores', async (ctx) => {
    if (!mounted || why) ctx.skip(why);
    const env = isolatedEnv(home);
    const dbFile = path.join(mountPoint, 'repl.db');
    const ingested = await runCli(['--db', dbFile, 'ingest', docs], { env });
    expect(ingested.code, ingested.stderr).toBe(0);
    const pty = spawnRaglineInPty(['--db', dbFile, 'chat', '--new', 'filling'], { env });
    sessions.push(pty);
    await pty.expect(PROMPT);
    expect(await say(pty, 'How do I rotate an API key?')).toContain('keys.md');

    const filler = path.join(mountPoint, 'filler');
    fill(filler);
    const good = await say(pty, '/good 1');
    expect(good).toContain(FULL);
    expect(good).toContain('Free some space and run the same command again');
    const asked = await say(pty, 'Which header carries the webhook signature?');
    expect(asked).toContain(FULL);
    expect(await say(pty, '/expect webhooks.md')).toContain(FULL);

    fs.rmSync(filler);
    expect(await say(pty, '/good 1')).toMatch(/turn 1 judged: relevant keys\.md/);
    expect(await say(pty, 'Which header carries the webhook signature?')).toContain('webhooks.md');
    pty.type(KEY.ctrlD);
    expect((await pty.exited).code).toBe(0);

    const stored = rows(dbFile);
    expect(stored.integrity).toBe('ok');
    expect(stored.turns).toEqual([
      { question: 'How do I rotate an API key?', status: 'answered' },
      { question: 'Which header carries the webhook signature?', status: 'answered' },
    ]);
    expect(stored.relevant).toEqual(['keys.md']);
  });

  it('the piped chat reports each failed write as the CLI does, reads on, and exits 1 at the end', async (ctx) => {
    if (!mounted) ctx.skip(why);
    const env = isolatedEnv(home);
    const dbFile = path.join(mountPoint, 'piped.db');
    const ingested = await runCli(['--db', dbFile, 'ingest', docs], { env });
    expect(ingested.code, ingested.stderr).toBe(0);
    const child = spawn(process.execPath, [BIN, '--db', dbFile, 'chat', '--new', 'piped'], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const until = async (seen: () => boolean) => {
      for (let waited = 0; !seen(); waited += 50) {
        if (waited > 30_000) throw new Error(`timed out; stdout:\n${stdout}\nstderr:\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    child.stdin.write('How do I rotate an API key?\n');
    await until(() => stdout.includes('[1] keys.md'));
    const filler = path.join(mountPoint, 'filler');
    fill(filler);
    child.stdin.write('/good 1\n');
    await until(() => stderr.split(FULL).length === 2);
    child.stdin.write('Which header carries the webhook signature?\n');
    await until(() => stderr.split(FULL).length === 3);
    fs.rmSync(filler);
    child.stdin.end('/good 1\nWhich header carries the webhook signature?\n');
    expect(await exited).toBe(1);
    expect(stdout).toMatch(/turn 1 judged: relevant keys\.md/);
    expect(stderr).not.toContain('database or disk is full');

    const stored = rows(dbFile);
    expect(stored.integrity).toBe('ok');
    expect(stored.turns).toEqual([
      { question: 'How do I rotate an API key?', status: 'answered' },
      { question: 'Which header carries the webhook signature?', status: 'answered' },
    ]);
    expect(stored.relevant).toEqual(['keys.md']);
  });
});
