/**
 * Throw this from a handler when retrying cannot help (a declined card, a deleted account): the job
 * is dead-lettered at once instead of using up its remaining attempts.
 */
export class PermanentJobError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentJobError';
  }
}
