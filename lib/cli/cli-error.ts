/** An error the CLI reports as one sentence on stderr, with its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Exit codes: 1 for a refused or failed action, 2 for a command line the CLI cannot parse, 3 for a verify that found a broken promise. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_VIOLATIONS = 3;
