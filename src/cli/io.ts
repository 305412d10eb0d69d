// What a run of the CLI reads and writes: its streams, environment, working
// directory and signals. The `ragline` command runs with the process's own; a
// run in-process (a test, another program) gives others, and the run then
// touches no state of the process it runs in. Kept on the commander program, so
// each command finds them from its Command.

import path from 'node:path';
import type { Command } from 'commander';

/** Where Ctrl-C and termination arrive: the process, or any emitter of 'SIGINT', 'SIGTERM' and 'SIGHUP'. */
export interface SignalSource {
  on(signal: StopSignal, listener: () => void): unknown;
  off(signal: StopSignal, listener: () => void): unknown;
}

/** What stops a run early: Ctrl-C, a termination request (kill, a service manager), the terminal closing. */
export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';
const STOP_SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const SIGNAL_NUMBERS: Record<StopSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/**
 * Calls `listener` with the signal whenever one of the stop signals arrives, until
 * the function returned is called. While it listens, none of them ends the process
 * at once: an answer in progress is stopped and its turn kept, as Ctrl-C does.
 */
export function onStop(signals: SignalSource, listener: (signal: StopSignal) => void): () => void {
  const listeners = STOP_SIGNALS.map((signal) => [signal, () => listener(signal)] as const);
  for (const [signal, handler] of listeners) signals.on(signal, handler);
  return () => {
    for (const [signal, handler] of listeners) signals.off(signal, handler);
  };
}

/** The exit status of a run stopped by `signal`, as shells report it: 128 + its number (130 for Ctrl-C). */
export function stopExitCode(signal: StopSignal | undefined): number {
  return 128 + SIGNAL_NUMBERS[signal ?? 'SIGINT'];
}

export interface CliIo {
  stdin: NodeJS.ReadStream;
  /** Its `isTTY` and `columns` say whether output goes to a terminal and how wide it is. */
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
  /** The working directory relative paths (--db, --config, folders, files, document names) are read against. */
  cwd: string;
  signals: SignalSource;
  /** Ends the run at once (a second Ctrl-C during ingest; the MCP server's workers): process.exit for the process. */
  exit: (code: number) => void;
}

/** This process's streams, environment, working directory and signals. */
export function processIo(): CliIo {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    signals: process,
    exit: (code) => process.exit(code),
  };
}

/** A run's io and the exit code its command chose. */
interface RunState {
  io: CliIo;
  exitCode?: number;
}

const programs = new WeakMap<Command, RunState>();

function rootOf(command: Command): Command {
  let root = command;
  while (root.parent) root = root.parent;
  return root;
}

/** Gives `program` (and every command under it) `io`. */
export function attachIo(program: Command, io: CliIo): void {
  programs.set(program, { io });
}

/** The io of the program `command` belongs to (this process's when none was attached). */
export function ioOf(command: Command): CliIo {
  return programs.get(rootOf(command))?.io ?? processIo();
}

/** Sets the exit code of `command`'s run (the process's exitCode is not touched: run() returns it). */
export function setExitCode(command: Command, code: number): void {
  const state = programs.get(rootOf(command));
  if (state) state.exitCode = code;
  else process.exitCode = code;
}

/** The exit code `program`'s command chose, if any. */
export function exitCodeOf(program: Command): number | undefined {
  return programs.get(program)?.exitCode;
}

/**
 * `file` read against the run's working directory. A relative path stays as it
 * was typed when that directory is the process's own (what messages quote is
 * what the user wrote); otherwise it becomes absolute.
 */
export function inCwd(io: CliIo, file: string): string;
export function inCwd(io: CliIo, file: string | undefined): string | undefined;
export function inCwd(io: CliIo, file: string | undefined): string | undefined {
  if (file === undefined || file === '' || file === ':memory:' || path.isAbsolute(file) || /^postgres(ql)?:\/\//i.test(file)) return file;
  return path.resolve(io.cwd) === process.cwd() ? file : path.resolve(io.cwd, file);
}
