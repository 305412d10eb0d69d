// Runs the built CLI (bin/ragline.js -> dist/) as a real child process, with its
// data and config folders pointed at a temp dir so no test touches the user's.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

export function runCli(
  args: string[],
  options: { env: NodeJS.ProcessEnv; input?: string; cwd?: string; timeoutMs?: number; /** run as this user (and group), e.g. nobody */ uid?: number },
): Promise<CliResult> {
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
