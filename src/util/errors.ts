// One error type for problems a person can fix. src/cli catches it in one place
// and prints the message (and the hint, if any) without a stack trace.

export class UserError extends Error {
  /** A second line that says what to do about it. */
  readonly hint?: string;
  /** Process exit code the CLI uses for this error. */
  readonly exitCode: number;

  constructor(message: string, options: { hint?: string; exitCode?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UserError';
    this.hint = options.hint;
    this.exitCode = options.exitCode ?? 1;
  }
}

/** Exit codes: 1 for runtime failures, 2 for bad usage or input. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
