/**
 * An expectation of the testing kit failed (`expectEnqueued`). Its message says what was expected
 * and what the store holds instead, with each payload cut short.
 */
export class SchedulerExpectationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SchedulerExpectationError';
  }
}

/**
 * `drain()` ran more attempts than its `maxJobs` bound: most often a job that enqueues itself again
 * on every run, or one that keeps failing with `advanceTime` on.
 */
export class DrainLimitError extends Error {
  constructor(
    message: string,
    /** The attempts drain had started when it gave up. */
    readonly attempts: number,
  ) {
    super(message);
    this.name = 'DrainLimitError';
  }
}
