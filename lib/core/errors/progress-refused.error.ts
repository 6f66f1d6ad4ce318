import { SchedulerError } from './scheduler.error.js';

/**
 * A progress report the store refused because the reporting worker no longer holds that attempt's
 * lease: the lease lapsed, the job was reclaimed, or it already ended. Nothing was written.
 */
export class ProgressRefusedError extends SchedulerError {
  constructor(
    readonly jobId: string,
    readonly attempt: number,
  ) {
    super('PROGRESS_REFUSED', `Progress for job ${jobId} attempt ${attempt} was refused: this worker no longer holds that attempt's lease.`);
  }
}
