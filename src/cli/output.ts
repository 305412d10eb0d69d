// Where the CLI writes: colour only on a TTY and never with NO_COLOR, progress
// on stderr, and JSON for scripts.

import type { Command } from 'commander';
import { toJson } from '../util/json.js';
import { ioOf } from './io.js';
import { redactSecrets } from '../util/secrets.js';
import { oneLine, sanitizeForTerminal, sanitizeStyled } from '../util/sanitize.js';

/** The styles the CLI writes with; each returns its text as it is when there is no colour. */
export type Colors = Record<'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan' | 'magenta', (text: string) => string>;

export interface Output {
  /** Colours for stdout (no-ops when stdout is not a colour TTY). */
  color: Colors;
  /** Colours for stderr. */
  errColor: Colors;
  isTTY: boolean;
  errIsTTY: boolean;
  /**
   * The width of the terminal stdout shows on, or COLUMNS when it is not one or does not
   * say (a terminal whose size nothing set reports 0); undefined when neither says.
   */
  readonly columns: number | undefined;
  out(line?: string): void;
  write(text: string): void;
  err(line?: string): void;
  json(value: unknown): void;
}

function colorLevel(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): 0 | 1 | 2 | 3 {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return 1;
  if (!stream.isTTY) return 0;
  const depth = stream.getColorDepth?.() ?? 1;
  return depth >= 24 ? 3 : depth >= 8 ? 2 : depth >= 4 ? 1 : 0;
}

const asIs = (text: string) => text;
const NO_COLORS: Colors = { bold: asIs, dim: asIs, red: asIs, green: asIs, yellow: asIs, cyan: asIs, magenta: asIs };

// chalk is imported only when a run's stdout or stderr can show colour: a run
// whose output goes to files and pipes (scripts, --json) never loads it.
let chalk: typeof import('chalk') | undefined;

/** Loads chalk if `io`'s stdout or stderr can show colour; createOutput colours only after it. */
export async function loadColors(io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream; env: NodeJS.ProcessEnv }): Promise<void> {
  if (!chalk && (colorLevel(io.stdout, io.env) > 0 || colorLevel(io.stderr, io.env) > 0)) chalk = await import('chalk');
}

/** Colours for `stream`: chalk at the stream's level, or none. */
function colorsFor(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): Colors {
  const level = colorLevel(stream, env);
  return chalk && level > 0 ? new chalk.Chalk({ level }) : NO_COLORS;
}

let pipeGuard = false;
let pipeExitCode: () => number | undefined = () => undefined;

/**
 * `ragline ... | head` closes the pipe early: that is the reader's choice, not an
 * error, and the process exits with the run's code so far. Only for this
 * process's own stdout and stderr (a run in-process on other streams adds no
 * listener to them), installed once and kept: writes still queued when the run
 * returns may meet the closed pipe.
 */
export function guardBrokenPipe(io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream }, exitCode: () => number | undefined): void {
  if (io.stdout !== process.stdout && io.stderr !== process.stderr) return;
  pipeExitCode = exitCode;
  if (pipeGuard) return;
  pipeGuard = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(pipeExitCode() ?? process.exitCode ?? 0);
      throw err;
    });
  }
}

/**
 * What a stream is written through: the one terminal sanitiser, then the one
 * redaction. Whatever a call site did, no escape sequence but the CLI's own colours
 * (and none at all when the stream shows none), no control but tab and newline and no
 * bidi control reaches the stream, nor a secret. Sanitised before redacted: a key
 * split by an invisible character is whole again, and found.
 */
function safeText(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): (text: string) => string {
  const styled = chalk !== undefined && colorLevel(stream, env) > 0;
  return (text) => redactSecrets(styled ? sanitizeStyled(text) : sanitizeForTerminal(text));
}

/** Text written to a file for the user (an export): what stdout would carry without colour, sanitised, then redacted. */
export function fileSafe(text: string): string {
  return redactSecrets(sanitizeForTerminal(text));
}

export function createOutput(stdout: NodeJS.WriteStream = process.stdout, stderr: NodeJS.WriteStream = process.stderr, env: NodeJS.ProcessEnv = process.env): Output {
  const outText = safeText(stdout, env);
  const errText = safeText(stderr, env);
  return {
    color: colorsFor(stdout, env),
    errColor: colorsFor(stderr, env),
    isTTY: Boolean(stdout.isTTY),
    errIsTTY: Boolean(stderr.isTTY),
    // A terminal says how wide it is; piped output takes COLUMNS when it is set, as `ls` does.
    get columns() {
      return usableColumns(stdout.columns) ?? usableColumns(Number(env.COLUMNS));
    },
    out: (line = '') => void stdout.write(outText(line) + '\n'),
    write: (text) => void stdout.write(outText(text)),
    err: (line = '') => void stderr.write(errText(line) + '\n'),
    // toJson writes every terminal-active character as a \u escape: the same JSON value, safe to print.
    json: (value) => void stdout.write(redactSecrets(toJson(value, 2)) + '\n'),
  };
}

/**
 * Fewer columns than this is taken for no width at all: a terminal whose size nothing
 * set (under `script`, a serial console) reports 0, and a result line at a width this
 * small keeps nothing but its location.
 */
const MIN_COLUMNS = 20;

/** A width to lay lines out in: a whole number of columns from MIN_COLUMNS to 10,000, else undefined (unknown). */
function usableColumns(columns: number | undefined): number | undefined {
  return columns !== undefined && Number.isInteger(columns) && columns >= MIN_COLUMNS && columns <= 10_000 ? columns : undefined;
}

/** The output of `command`'s run (its program's streams and environment). */
export function outputFor(command: Command): Output {
  const io = ioOf(command);
  return createOutput(io.stdout, io.stderr, io.env);
}

/** A one-line progress display on a TTY stderr, redrawn at most ten times a second. */
export class ProgressLine {
  private last = 0;
  private shown = false;
  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}

  update(text: string, force = false): void {
    if (!this.stream.isTTY) return;
    const now = Date.now();
    if (!force && now - this.last < 100) return;
    this.last = now;
    const width = usableColumns(this.stream.columns) ?? 80;
    this.stream.write('\r\u001b[2K' + redactSecrets(oneLine(text, width - 1)));
    this.shown = true;
  }

  clear(): void {
    if (this.shown) this.stream.write('\r\u001b[2K');
    this.shown = false;
  }
}

export { formatBytes } from '../util/bytes.js';

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

export { toJson } from '../util/json.js';
