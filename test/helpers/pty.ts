// Runs the built CLI in a real pseudo-terminal, so the REPL sees a TTY on stdin and
// stdout exactly as it does for a person: readline in raw mode, line editing, the
// up-arrow, Ctrl-C and Ctrl-D as bytes. The terminal comes from util-linux `script`
// (Debian and most Linux distributions have it by default); tests skip with a
// message where it is missing. Input is written as keystrokes; output is read back
// as text with the terminal escape sequences removed, pexpect style: `expect` waits
// for a pattern after the previous match and moves past it.

import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { BIN, ROOT } from './cli.js';

/** Keystrokes as a terminal sends them. */
export const KEY = {
  enter: '\r',
  up: '\u001b[A',
  ctrlC: '\u0003',
  ctrlD: '\u0004',
  escape: '\u001b',
  tab: '\t',
} as const;

/** Why PTY tests cannot run here, or undefined when they can. */
export function ptyUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `pseudo-terminal tests need util-linux \`script\` on Linux (this is ${process.platform})`;
  const probe = spawnSync('script', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0 || !/util-linux/.test(probe.stdout)) {
    return 'pseudo-terminal tests need `script` from util-linux (apt-get install util-linux); it is not installed';
  }
  return undefined;
}

/** Removes CSI/OSC escape sequences and carriage returns: what a reader of the screen's lines sees. */
export function stripAnsi(text: string): string {
  return text
    .replace(/\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g, '')
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, '')
    .replace(/\u001b[@-Z\\-_]/g, '')
    .replace(/\r/g, '');
}

export interface PtyExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface PtySession {
  /** Types text (keystrokes) into the terminal. */
  type(text: string): void;
  /**
   * Waits until the screen text after the previous match matches `pattern`; returns the
   * text from there up to the end of the match and moves past it.
   */
  expect(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
  /** Everything the terminal showed so far, escape sequences removed. */
  text(): string;
  /** Resolves when the program (and the terminal) ended. */
  exited: Promise<PtyExit>;
  /** Ends the terminal's process group (cleanup after a failed test). */
  kill(): void;
}

function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * Starts `ragline <args>` in a pseudo-terminal of `cols` x `rows`. `script -e` exits
 * with the program's exit code; `-f` flushes output as it comes.
 */
export function spawnRaglineInPty(
  args: string[],
  options: { env: NodeJS.ProcessEnv; cols?: number; rows?: number; cwd?: string },
): PtySession {
  const command = [
    `stty cols ${options.cols ?? 120} rows ${options.rows ?? 40}`,
    `exec ${[process.execPath, BIN, ...args].map(shellQuote).join(' ')}`,
  ].join('; ');
  const child: ChildProcessWithoutNullStreams = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { TERM: 'xterm', ...options.env, SHELL: '/bin/sh' },
    cwd: options.cwd ?? ROOT,
    detached: true,
  });
  let raw = '';
  let cursor = 0;
  let done = false;
  const waiters = new Set<() => void>();
  const onData = (data: Buffer) => {
    raw += data.toString('utf8');
    for (const wake of [...waiters]) wake();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<PtyExit>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      done = true;
      for (const wake of [...waiters]) wake();
      resolve({ code, signal });
    });
  });

  return {
    type: (text) => void child.stdin.write(text),
    text: () => stripAnsi(raw),
    exited,
    kill: () => {
      if (done || child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
    expect: (pattern, timeoutMs = 10_000) =>
      new Promise<string>((resolve, reject) => {
        const check = (): boolean => {
          const screen = stripAnsi(raw);
          const rest = screen.slice(cursor);
          let end = -1;
          if (typeof pattern === 'string') {
            const at = rest.indexOf(pattern);
            if (at !== -1) end = at + pattern.length;
          } else {
            const match = new RegExp(pattern.source, pattern.flags.replace('g', '')).exec(rest);
            if (match) end = match.index + match[0].length;
          }
          if (end === -1) return false;
          cursor += end;
          resolve(rest.slice(0, end));
          return true;
        };
        if (check()) return;
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${String(pattern)}; the screen after the last match:\n${stripAnsi(raw).slice(cursor)}`));
        }, timeoutMs);
        const wake = () => {
          if (check()) {
            clearTimeout(timer);
            waiters.delete(wake);
          } else if (done) {
            clearTimeout(timer);
            waiters.delete(wake);
            reject(new Error(`The program ended before ${String(pattern)} appeared; the screen after the last match:\n${stripAnsi(raw).slice(cursor)}`));
          }
        };
        waiters.add(wake);
      }),
  };
}
