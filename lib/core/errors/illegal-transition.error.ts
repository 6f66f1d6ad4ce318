import { SchedulerError } from './scheduler.error.js';

/** An operator action that the current state of a job or schedule does not allow, such as replaying a running job. */
export class IllegalTransitionError extends SchedulerError {
  constructor(
    /** The job's or schedule's id. */
    readonly targetId: string,
    readonly action: string,
    readonly state: string,
    message: string,
  ) {
    super('ILLEGAL_TRANSITION', message);
  }
}
