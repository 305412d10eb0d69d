// Runs the CLI for tests, with its data and config folders pointed at a temp dir
// so no test touches the user's: in-process from the sources (runCliInProcess,
// most tests), or as a real child process of the built bin/ragline.js -> dist/
// (runCli: exit codes of a process, signals, the terminal, other users).

import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin', 'ragline.js');
export const FIXTURE_DOCS = path.join(ROOT, 'fixtures', 'docs');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function tempDir(prefix = 'ragline-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Environment for a child process that sees nothing of the developer's setup. */
export function isolatedEnv(home: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_DATA_HOME: path.join(home, 'data'),
    XDG_CONFIG_HOME: path.join(home, 'config'),
    NO_COLOR: '1',
  };
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

export interface CliOptions {
  env: NodeJS.ProcessEnv;
  input?: string;
  cwd?: string;
  timeoutMs?: number;
  /** run as this user (and group), e.g. nobody: a child process only */
  uid?: number;
}

/** How a test file runs the CLI: in-process, or as a child process. */
export type CliRunner = (args: string[], options: CliOptions) => Promise<CliResult>;

export function runCli(args: string[], options: CliOptions): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const user = options.uid === undefined ? {} : { uid: options.uid, gid: options.uid };
    const child = spawn(process.execPath, [BIN, ...args], { env: options.env, cwd: options.cwd ?? ROOT, ...user });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Two tiny Markdown documents in a temp folder, for CLI tests that need an index but not fixtures/docs. */
export function writeTinyDocs(): string {
  const docs = tempDir('ragline-docs-');
  fs.writeFileSync(path.join(docs, 'keys.md'), '# API keys\n\nRotate an API key from the dashboard under Settings > Keys.\n');
  fs.writeFileSync(path.join(docs, 'webhooks.md'), '# Webhooks\n\nEvery webhook carries a signature header, X-Orbitly-Signature.\n');
  return docs;
}

/** A stream that keeps what is written to it, as a pipe would (no terminal). */
function capture(): { stream: NodeJS.WriteStream; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/**
 * Runs `ragline <args>` in this process, from the sources (src/cli/main.ts run()),
 * with the same options and result as runCli: stdin is `input` (not a terminal),
 * stdout and stderr are pipes, no signal arrives, and a request to end the
 * process at once (the MCP server's last step) is ignored. `signal` is always null.
 */
export async function runCliInProcess(args: string[], options: CliOptions): Promise<CliResult> {
  if (options.uid !== undefined) throw new Error('runCliInProcess cannot run as another user: use runCli');
  const { run } = await import('../../src/cli/main.js');
  const stdout = capture();
  const stderr = capture();
  const stdin = Readable.from(options.input ? [Buffer.from(options.input)] : []) as unknown as NodeJS.ReadStream;
  const running = run(args, {
    stdin,
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: options.env,
    cwd: options.cwd ?? ROOT,
    signals: new EventEmitter(),
    exit: () => {},
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`ragline ${args.join(' ')} did not finish within ${options.timeoutMs ?? 60_000} ms`)), options.timeoutMs ?? 60_000);
  });
  try {
    const code = await Promise.race([running, timeout]);
    // What was written is all there: the PassThroughs hand their data on synchronously once read.
    await new Promise((resolve) => setImmediate(resolve));
    return { code, signal: null, stdout: stdout.text(), stderr: stderr.text() };
  } finally {
    clearTimeout(timer);
  }
}

/** The in-process runner, or the child process one when RAGLINE_TEST_PROCESS=1 (to check both agree). */
export const ragline: CliRunner = process.env.RAGLINE_TEST_PROCESS === '1' ? runCli : runCliInProcess;
