import { SchedulerError } from './scheduler.error.js';

/** The store could not be reached or refused the operation for a reason outside the caller's input. */
export class StoreUnavailableError extends SchedulerError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('STORE_UNAVAILABLE', message, options);
  }
}

/** The store stayed busy (locked by another transaction) for longer than the caller was willing to wait. */
export class StoreBusyError extends SchedulerError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('STORE_BUSY', message, options);
  }
}
