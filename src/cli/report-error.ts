// The one place where an error becomes what the user reads and an exit code:
// a UserError as its message and hint, SQLite failures in words, anything else
// as its message (with the stack when RAGLINE_DEBUG is set).

import { UserError, EXIT_FAILURE } from '../util/errors.js';
import { oneLine, sanitizeForTerminal } from '../util/sanitize.js';
import { redactSecrets, registerSecret } from '../util/secrets.js';
import type { Output } from './output.js';

/** SQLite failures in the middle of a command, in words (the file was opened fine). */
function sqliteRuntimeError(err: unknown): UserError | undefined {
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

/** Prints what went wrong (and, with RAGLINE_DEBUG in `env`, the stack) and returns the exit code. */
export function reportError(caught: unknown, output: Output, env: NodeJS.ProcessEnv): number {
  const err = sqliteRuntimeError(caught) ?? caught;
  // The key may not have been resolved yet when the failure came early.
  registerSecret(env.RAGLINE_API_KEY);
  registerSecret(env.OPENAI_API_KEY);
  if (env.RAGLINE_DEBUG) {
    // Stacks and causes carry the server's own words, which may echo the key.
    output.err(sanitizeForTerminal(redactSecrets(err instanceof Error ? (err.stack ?? err.message) : String(err))));
    for (let cause = err instanceof Error ? err.cause : undefined, depth = 0; cause !== undefined && depth < 5; depth++) {
      output.err(sanitizeForTerminal(redactSecrets(`cause: ${String((cause as Error)?.stack ?? cause)}`)));
      cause = cause instanceof Error ? cause.cause : undefined;
    }
  }
  // Messages quote paths, folder names and servers' words: one safe line each.
  if (err instanceof UserError) {
    output.err(output.errColor.red('error: ') + oneLine(err.message));
    if (err.hint) output.err(output.errColor.dim(oneLine(err.hint)));
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  output.err(output.errColor.red('error: ') + oneLine(message));
  if (!env.RAGLINE_DEBUG) output.err(output.errColor.dim('Set RAGLINE_DEBUG=1 to see the stack trace.'));
  return EXIT_FAILURE;
}
