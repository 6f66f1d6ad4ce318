import type { ManualClock } from '../core/index.js';
import type { SchedulerModuleOptions } from '../nest/index.js';

/**
 * Options of `SchedulerTestingModule.forRoot`: the scheduler's own options (handlers' defaults,
 * retry policy, queues, limits), less those a test cannot use, plus the kit's.
 */
export interface SchedulerTestingOptions
  extends Omit<SchedulerModuleOptions, 'store' | 'dataSource' | 'schema' | 'asyncClaimCommit' | 'autoStart' | 'worker' | 'migrationsRun'> {
  /**
   * Where jobs live. `memory` (default): an in-memory store, nothing else needed; a handler may
   * not use the attempt's EntityManager there. `sqlite`: the store on the application's own
   * TypeORM DataSource (`better-sqlite3`, `:memory:` or a file, registered with `@nestjs/typeorm`),
   * so a handler writing through the attempt's EntityManager, and an enqueue inside the host's
   * transaction, behave as in production, with no server.
   */
  readonly store?: 'memory' | 'sqlite';
  /** The clock of the store and the worker. Default: a new ManualClock (1 January 2030, UTC). */
  readonly clock?: ManualClock;
  /**
   * Run each job when it is enqueued: `enqueue` and `enqueueMany` resolve once `drain()` has run
   * what became due (see the testing guide for what differs). A batch handler's jobs run at once
   * too, in calls of the jobs the enqueue wrote (one `enqueue`: a call of one job), never waiting
   * out `batch.waitMs`. Default false.
   */
  readonly inline?: boolean;
  /** Register the module globally, so SchedulerClient and SchedulerTester inject anywhere. Default true. */
  readonly isGlobal?: boolean;
  /** The `@nestjs/typeorm` DataSource the `sqlite` store uses, if not the default one. */
  readonly dataSourceName?: string;
}

/** How `drain()` runs. */
export interface DrainOptions {
  /**
   * When nothing is due, move the clock straight to the next job's run time (a retry's backoff, a
   * `runAt` or `delayMs`, a rate limit's window), stopping at each schedule tick on the way, and go
   * on until no job waits. Default false: only what is due now runs.
   */
  readonly advanceTime?: boolean;
  /** Attempts after which drain gives up with a DrainLimitError. Default 1,000. */
  readonly maxJobs?: number;
}

/** What one `drain()` did: attempts run, and the state each applied outcome left its job in. */
export interface DrainSummary {
  /** Attempts started. */
  readonly attempts: number;
  readonly succeeded: number;
  /** Failed attempts whose job waits for a retry. */
  readonly retried: number;
  /** Attempts that snoozed their job (`ctx.snooze`); with `advanceTime`, drain runs it again once the snooze ends. */
  readonly snoozed: number;
  readonly deadLettered: number;
  readonly quarantined: number;
  readonly cancelled: number;
  /** How far drain moved the clock, in milliseconds (0 without `advanceTime`). */
  readonly advancedMs: number;
  /** Jobs still waiting when it returned (`scheduled` or `awaiting_parents`): later, paused or held by a limit. */
  readonly waiting: number;
}
