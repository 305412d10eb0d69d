// The `ragline` command as a real process (bin/ragline.js -> dist/, built by the
// global setup), for what only a process shows: its exit code, what goes to
// stdout and what to stderr, stdin from a pipe, and a reader that closes the pipe
// early. One case per command family; everything else about the commands is
// tested in-process (test/helpers/cli.ts runCliInProcess). The MCP server's
// process (protocol on stdout only, exit 0 when stdin closes) is in
// test/mcp.test.ts; Ctrl-C in chat-cli, ingest-failure and soak/ingest-kill; the
// terminal in soak/chat-pty and soak/judge-pty; two processes at once in
// soak/concurrency and soak/store-contention; a full disk in soak/disk-full.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, FIXTURE_DOCS, ROOT, isolatedEnv, runCli, tempDir } from './helpers/cli.js';

let home: string;
let db: string;
const env = () => isolatedEnv(home, { RAGLINE_DB: db });

beforeAll(() => {
  home = tempDir('ragline-process-');
  db = path.join(home, 'process.db');
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

describe('ragline as a process', () => {
  test('ingest: exit 0 with the JSON summary on stdout and nothing on stderr; a missing folder exits 2 with the error on stderr only', async () => {
    const ingested = await runCli(['ingest', FIXTURE_DOCS, '--json'], { env: env() });
    expect(ingested.stderr).toBe('');
    expect(ingested.code).toBe(0);
    expect(JSON.parse(ingested.stdout)).toMatchObject({ db, files: { added: 16 } });
    const missing = await runCli(['ingest', path.join(home, 'no-such-folder')], { env: env() });
    expect(missing).toMatchObject({ code: 2, signal: null, stdout: '' });
    expect(missing.stderr).toMatch(/^error: No such file or folder: /);
  });

  test('search and ask: results and the answer on stdout, exit 0; a usage error exits 2 (the program) or 1 (a command), with its message on stderr', async () => {
    const found = await runCli(['search', '--json', '-k', '2', 'rotate an API key'], { env: env() });
    expect(found.stderr).toBe('');
    expect(found.code).toBe(0);
    expect(JSON.parse(found.stdout).results[0].documentPath).toBe('guides/authentication.md');
    const asked = await runCli(['ask', '-q'], { env: env(), input: 'How long is an API key valid by default?\n' });
    expect(asked.code).toBe(0);
    expect(asked.stdout).toContain('90 days');
    expect(asked.stdout).toContain('guides/authentication.md');
    expect(asked.stderr).toBe('');
    const unknown = await runCli(['bogus'], { env: env() });
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toContain("unknown command 'bogus'");
    const badOption = await runCli(['search', '--bogus', 'x'], { env: env() });
    expect(badOption).toMatchObject({ code: 2, stdout: '' });
    expect(badOption.stderr).toContain("unknown option '--bogus'");
  });

  test('chat piped: each question and its turn on stdout, the session on stderr, exit 0', async () => {
    const chat = await runCli(['chat', '--new', 'piped'], { env: env(), input: 'How do I rotate an API key?\nand does it expire?\n' });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toMatch(/^› How do I rotate an API key\?$/m);
    expect(chat.stdout).toMatch(/^› and does it expire\?$/m);
    expect(chat.stderr).toContain('session piped');
  });

  test('sessions: the list on stdout, exit 0; rm without a terminal to confirm on exits 2 and removes nothing', async () => {
    const list = await runCli(['sessions', 'list'], { env: env() });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('piped');
    expect(list.stderr).toBe('');
    const rm = await runCli(['sessions', 'rm', 'piped'], { env: env() });
    expect(rm).toMatchObject({ code: 2, stdout: '' });
    expect(rm.stderr).toContain('there is no terminal to confirm on');
    expect((await runCli(['sessions', 'list'], { env: env() })).stdout).toContain('piped');
  });

  test('a reader that closes the pipe early (`ragline search ... | head -0`) ends the command quietly with exit 0', async () => {
    const child = spawn(process.execPath, [BIN, 'search', '-k', '50', 'api key'], { env: env(), cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    // Closed before the command has written anything: its first write meets EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    expect(exit).toEqual({ code: 0, signal: null });
    expect(stderr).toBe('');
  });
});
