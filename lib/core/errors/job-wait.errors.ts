import type { JobState } from '../job-state.js';
import { SchedulerError } from './scheduler.error.js';

/** The terminal states a waited-on job can end in without succeeding. */
export type FailedJobState = Extract<JobState, 'dead_lettered' | 'cancelled' | 'quarantined'>;

/**
 * A job `waitFor` waited on ended without succeeding. The message names the job and its state only;
 * the job's last error is on `lastError`, since error text from a handler may quote data that must
 * not reach a log line by accident.
 */
export class JobFailedError extends SchedulerError {
  constructor(
    readonly jobId: string,
    readonly state: FailedJobState,
    readonly lastError: string | null,
    readonly attempt: number,
  ) {
    super('JOB_FAILED', `Job ${jobId} ended ${state} after ${attempt} attempt${attempt === 1 ? '' : 's'}; its last error is on lastError.`);
  }
}

/** `waitFor` gave up after its `timeoutMs`; the job itself is untouched and may still finish. */
export class JobWaitTimeoutError extends SchedulerError {
  constructor(
    readonly jobId: string,
    readonly timeoutMs: number,
  ) {
    super('WAIT_TIMEOUT', `Job ${jobId} did not finish within ${timeoutMs} ms; it was left as it is.`);
  }
}

/** The signal given to `waitFor` was aborted; `cause` is the signal's reason. The job is untouched. */
export class JobWaitAbortedError extends SchedulerError {
  constructor(
    readonly jobId: string,
    reason: unknown,
  ) {
    super('WAIT_ABORTED', `Waiting for job ${jobId} was aborted; the job was left as it is.`, { cause: reason });
  }
}

/** The waiter was closed (the module shut down) while `waitFor` was pending; the job is untouched. */
export class JobWaiterClosedError extends SchedulerError {
  constructor(readonly jobId: string) {
    super('WAITER_CLOSED', `Stopped waiting for job ${jobId} because the scheduler is shutting down; the job was left as it is.`);
  }
}

/** `waitForBatch` gave up after its `timeoutMs`; the batch is untouched and may still end. */
export class BatchWaitTimeoutError extends SchedulerError {
  constructor(
    readonly batchId: string,
    readonly timeoutMs: number,
  ) {
    super('WAIT_TIMEOUT', `Batch ${batchId} did not end within ${timeoutMs} ms; it was left as it is.`);
  }
}

/** `waitForBatch`'s signal aborted; the batch is untouched. */
export class BatchWaitAbortedError extends SchedulerError {
  constructor(
    readonly batchId: string,
    reason: unknown,
  ) {
    super('WAIT_ABORTED', `Waiting for batch ${batchId} was aborted; the batch was left as it is.`, { cause: reason });
  }
}
