// The streams and environment a run of the CLI uses: the process's own for the
// `ragline` command, others for a run in-process (tests). Kept on the commander
// program, so each command finds them from its Command.

import type { Command } from 'commander';

export interface CliIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
}

/** This process's streams and environment. */
export function processIo(): CliIo {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
}

const programs = new WeakMap<Command, CliIo>();

/** Gives `program` (and every command under it) `io`. */
export function attachIo(program: Command, io: CliIo): void {
  programs.set(program, io);
}

/** The io of the program `command` belongs to (this process's when none was attached). */
export function ioOf(command: Command): CliIo {
  let root = command;
  while (root.parent) root = root.parent;
  return programs.get(root) ?? processIo();
}
