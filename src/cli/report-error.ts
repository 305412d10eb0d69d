// The one place where an error becomes what the user reads and an exit code:
// a UserError as its message and hint, SQLite failures in words, anything else
// as its message (with the stack when RAGLINE_DEBUG is set).

import { sqliteRuntimeError } from '../util/sqlite-errors.js';
import { UserError, EXIT_FAILURE } from '../util/errors.js';
import { oneLine, sanitizeForTerminal } from '../util/sanitize.js';
import { redactSecrets, registerSecret } from '../util/secrets.js';
import type { Output } from './output.js';

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
