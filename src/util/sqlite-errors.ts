// SQLite failures in the middle of a command, in words: the CLI's error report and a
// chat turn that fails both say them so ("The database file is corrupted." with what to
// do, not "Unexpected error: database disk image is malformed").

import { UserError } from './errors.js';

/** SQLite failures in the middle of a command, in words (the file was opened fine). */
export function sqliteRuntimeError(err: unknown): UserError | undefined {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return undefined;
  if (code.startsWith('SQLITE_FULL')) {
    return new UserError('The disk holding the database is full; the last write was rolled back and nothing is half-written.', {
      hint: 'Free some space and run the same command again: it continues where it stopped.',
      cause: err,
    });
  }
  if (code.startsWith('SQLITE_READONLY')) {
    return new UserError('The database is read-only for this user, so this command could not write to it; nothing was changed.', {
      hint: 'Make the database file and its folder writable (chmod u+w), or use a copy; commands that only read (stats, search, sessions list/show/export) work as it is.',
      cause: err,
    });
  }
  if (code.startsWith('SQLITE_IOERR')) {
    if (code.startsWith('SQLITE_IOERR_SHM')) {
      return new UserError(`The disk holding the database may be full (${code}); the last write was rolled back.`, {
        hint: 'Free some space on that disk (df -h shows it) and run the same command again: it continues where it stopped.',
        cause: err,
      });
    }
    return new UserError(`The disk reported an I/O error (${code}); the last write was rolled back.`, {
      hint: 'Check the disk (space, permissions, health) and run the command again.',
      cause: err,
    });
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new UserError('The database stayed locked by another ragline process for too long.', {
      hint: 'Wait for the other command to finish and run this one again.',
      cause: err,
    });
  }
  if (code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_NOTADB')) {
    return new UserError('The database file is corrupted.', {
      hint: 'Run `ragline doctor`; keep a copy of the file, then rebuild it with `ragline ingest <folder>` into a new --db.',
      cause: err,
    });
  }
  return undefined;
}

/** Whether `err` is SQLite refusing a write because the database is read-only for this process. */
export function isReadOnlyError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_READONLY');
}
