// Reads a file a user named only when it is a regular file. A FIFO would block
// the read until something writes to it (and a blocked read lets no Ctrl-C
// through); /dev/zero or /dev/urandom never end. The file is opened without
// blocking (O_NONBLOCK) and checked on the opened descriptor, so what is read is
// what was checked.

import fs from 'node:fs';

/** What a path holds when it is not a regular file. */
export type NotAFile = 'a folder' | 'a FIFO' | 'a device' | 'a socket';

/** A path that was not read because it is not a regular file. */
export interface NotARegularFile {
  reason: 'not-a-file';
  /** What it is instead. */
  is: NotAFile;
}

/** A regular file that was not read because it is larger than the limit. */
export interface TooLarge {
  reason: 'too-large';
  size: number;
}

/**
 * The bytes of the regular file at `file`, or why it was not read: it is not a
 * regular file, or it is larger than `maxBytes`. Errors from the file system
 * (ENOENT, EACCES...) are thrown as they are.
 */
export function readRegularFile(file: string): Buffer | NotARegularFile;
export function readRegularFile(file: string, maxBytes: number): Buffer | NotARegularFile | TooLarge;
export function readRegularFile(file: string, maxBytes = Number.POSITIVE_INFINITY): Buffer | NotARegularFile | TooLarge {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
  } catch (err) {
    // A socket (ENXIO), or a device without its driver: neither is a file.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENXIO' || code === 'EOPNOTSUPP') return { reason: 'not-a-file', is: 'a socket' };
    if (code === 'ENODEV') return { reason: 'not-a-file', is: 'a device' };
    throw err;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return { reason: 'not-a-file', is: stat.isDirectory() ? 'a folder' : stat.isFIFO() ? 'a FIFO' : stat.isSocket() ? 'a socket' : 'a device' };
    if (stat.size > maxBytes) return { reason: 'too-large', size: stat.size };
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
