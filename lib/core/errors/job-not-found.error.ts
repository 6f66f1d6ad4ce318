import { SchedulerError } from './scheduler.error.js';

/** No job with the given id exists in this store. */
export class JobNotFoundError extends SchedulerError {
  constructor(readonly jobId: string) {
    super('JOB_NOT_FOUND', `No job with id ${jobId} exists.`);
  }
}

/** No schedule with the given id exists in this store. */
export class ScheduleNotFoundError extends SchedulerError {
  constructor(readonly scheduleId: string) {
    super('SCHEDULE_NOT_FOUND', `No schedule with id ${scheduleId} exists.`);
  }
}

/** No stored job belongs to a batch with the given id: it never existed, or retention deleted all of its jobs. */
export class BatchNotFoundError extends SchedulerError {
  constructor(readonly batchId: string) {
    super('BATCH_NOT_FOUND', `No batch with id ${batchId} exists.`);
  }
}
