import type { RetryPolicy } from '../../core/index.js';
import type { Rate } from '../../store/index.js';
import type { BatchHandlerOptions } from '../../worker/index.js';
import type { JobName, JobPayload } from './job-registry.interface.js';
import type { JobSequenceOption } from '../job-sequence.js';

/** How the schedule a `@Job` declares behaves; see ScheduleInput for each field. */
interface DeclaredScheduleBase<P> {
  /** The payload of every minted job. Default `{}`. */
  readonly payload?: P;
  readonly catchUp?: 'skip' | 'coalesce';
  readonly noOverlap?: boolean;
  readonly misfireGraceMs?: number;
}

/** A recurring schedule declared on the handler: a cron pattern (in a time zone, UTC by default) or an interval. */
export type DeclaredSchedule<P = unknown> =
  | (DeclaredScheduleBase<P> & { readonly cron: string; readonly timezone?: string })
  | (DeclaredScheduleBase<P> & { readonly everyMs: number });

/** Options of a `@Job` handler. */
export interface JobOptions<N extends string = JobName> {
  /** The wire name: stable across deployments, never derived from the class name. */
  readonly name: N;
  /** The queue its jobs go to. Default `default`; it must be one of the module's `queues`. */
  readonly queue?: string;
  /** Attempts before dead-lettering. Default: the module's `maxAttempts` (10). */
  readonly maxAttempts?: number;
  /**
   * Claims take due jobs with a lower priority first: a whole number from -10 (first) to 10
   * (last). Default 0. An enqueue's `priority` overrides it.
   */
  readonly priority?: number;
  /** Overrides the module's retry policy for this job. */
  readonly retry?: Partial<RetryPolicy>;
  /** Fail the attempt (and abort its signal) after this many milliseconds. */
  readonly timeoutMs?: number;
  /**
   * Give each attempt a transaction-bound EntityManager whose writes commit with the success
   * outcome. Default true; the transaction only opens if the handler uses the manager. A batch
   * handler (`batch`) has none: false by default, and true is refused.
   */
  readonly transaction?: boolean;
  /**
   * Run this job on a recurring schedule. At boot the schedule is created (or updated) under an id
   * derived from the wire name, so every node agrees on it.
   */
  readonly schedule?: DeclaredSchedule<JobPayload<N>>;
  /**
   * Checks the payload before each attempt. Returning false or throwing sends the job to
   * `quarantined` without running it (the reason becomes its last error, never a log line); replay
   * it once the producer or the validator is fixed. A schema parser fits: `(p) => schema.parse(p)`.
   */
  readonly validate?: (payload: unknown) => unknown;
  /**
   * How many times one job may snooze (`return ctx.snooze(ms)`): the snooze after that
   * dead-letters it, so a job cannot snooze forever. A whole number from 0 to 100,000; default
   * 100. See docs/snooze.md.
   */
  readonly maxSnoozes?: number;
  /**
   * The fair group of each job, computed from its payload at enqueue (a tenant, an account):
   * claims take turns across the groups with due work, so one group's backlog cannot starve
   * another's jobs. It is also the job's concurrency key unless `concurrencyKey` is set, so
   * `concurrencyLimit` and `rateLimit` then apply per group. See docs/groups.md.
   */
  readonly group?: (payload: JobPayload<N>) => string;
  /**
   * The concurrency key of each job, computed from its payload at enqueue (for example the tenant
   * or customer). Jobs of any name that share a key share that key's limit.
   */
  readonly concurrencyKey?: (payload: JobPayload<N>) => string;
  /**
   * At most this many jobs with the same concurrency key run at once, cluster-wide. Declared for a
   * key the first time one of its jobs is enqueued; `SchedulerClient.setConcurrencyLimit` (or the
   * CLI) changes it later. Without `concurrencyKey`, the key is the wire name: a cap on this job.
   */
  readonly concurrencyLimit?: number;
  /**
   * At most `max` of the jobs with the same concurrency key start in any window of `perMs`
   * milliseconds, cluster-wide. Declared for a key the first time one of its jobs is enqueued;
   * `SchedulerClient.setRateLimit` changes it later. Without `concurrencyKey`, the key is the wire
   * name: a rate for this job. See docs/rate-limits.md.
   */
  readonly rateLimit?: Rate;
  /**
   * Each job joins a sequence whose key is computed from its payload at enqueue (an account, an
   * order): jobs of one key run one at a time, in enqueue order, across wire names. `afterFailure`
   * (default `block`) says whether a job waits behind one that failed for good. An enqueue's own
   * `sequence` wins. See docs/sequences.md.
   */
  readonly sequence?: JobSequenceOption<JobPayload<N>>;
  /**
   * The handler takes up to `size` due jobs of this name in one call (a `BatchJobHandler`),
   * waiting up to `waitMs` for the batch to fill. Each job keeps its own attempts, retries and
   * outcome; one call takes one `concurrency` slot. A batch handler has no attempt transaction
   * (`transaction` defaults to false, and true is refused).
   */
  readonly batch?: BatchHandlerOptions;
}

/** The options of a batch handler's `@Job`: `batch` set, and no attempt transaction. */
export type BatchJobOptions<N extends string = JobName> = JobOptions<N> & { readonly batch: BatchHandlerOptions; readonly transaction?: false };

/** The options of `@Job(definition, options)`: what only a handler has, beside a shared definition. */
export interface JobHandlerOptions<P = unknown> extends Pick<JobOptions<string>, 'timeoutMs' | 'transaction' | 'validate' | 'maxSnoozes' | 'batch'> {
  readonly schedule?: DeclaredSchedule<P>;
}

/** The options of a batch handler's `@Job(definition, options)`: `batch` set, and no attempt transaction. */
export type BatchJobHandlerOptions<P = unknown> = JobHandlerOptions<P> & { readonly batch: BatchHandlerOptions; readonly transaction?: false };
