import type { JobState } from '../job-state.js';
import { SchedulerError } from './scheduler.error.js';

/** An operator action that the job's current state does not allow, such as replaying a running job. */
export class IllegalTransitionError extends SchedulerError {
  constructor(
    readonly jobId: string,
    readonly action: string,
    readonly state: JobState,
    message: string,
  ) {
    super('ILLEGAL_TRANSITION', message);
  }
}
