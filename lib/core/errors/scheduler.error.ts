/** Machine-readable codes carried by every {@link SchedulerError}. */
export type SchedulerErrorCode =
  | 'INVALID_ARGUMENT'
  | 'PAYLOAD_TOO_LARGE'
  | 'INVALID_IDENTIFIER'
  | 'JOB_NOT_FOUND'
  | 'SCHEDULE_NOT_FOUND'
  | 'BATCH_NOT_FOUND'
  | 'ILLEGAL_TRANSITION'
  | 'CAPABILITY_NOT_SUPPORTED'
  | 'STORE_UNAVAILABLE'
  | 'STORE_BUSY'
  | 'INCOMPATIBLE_SCHEMA'
  | 'JOB_FAILED'
  | 'WAIT_TIMEOUT'
  | 'WAIT_ABORTED'
  | 'WAITER_CLOSED'
  | 'PROGRESS_REFUSED';

/**
 * The base of every error this library throws on purpose. The message is one sentence a person can
 * act on; `code` is stable for programs.
 */
export class SchedulerError extends Error {
  constructor(
    readonly code: SchedulerErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}
