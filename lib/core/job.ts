/**
 * Glossary
 * - Job: one unit of work. Its wire name is the stable handler name (never a class name); its
 *   payload is JSON.
 * - Attempt: one execution of the handler. The counter advances when a worker claims the job, so a
 *   lease that lapses costs an attempt exactly as a thrown error does. The first attempt is 1.
 * - Lease: `(workerId, attempt, leasedUntil)`, stamped by a claim and renewed by heartbeats. Only
 *   the holder of the live lease can record the attempt's outcome.
 * - Occurrence: one firing of a job at `scheduledFor`. Consumers dedupe on its `occurrenceId`.
 */
import type { JobState } from './job-state.js';
import type { RetryPolicy } from './retry-policy.js';
import type { TraceContext } from './validation/trace-context.js';

/**
 * How a dependant's parents release it: `on_success` (each parent must succeed; a parent that ends
 * dead-lettered, cancelled or quarantined cancels the dependant), `on_any_terminal` (any end will
 * do) or `on_failure` (it runs once every parent ended and at least one did not succeed; when all
 * succeeded it is cancelled instead).
 */
export type DependencyMode = 'on_success' | 'on_any_terminal' | 'on_failure';

/** Which callback of a batch a job is (docs/batches.md): it runs when the batch succeeded, ended, or ended with a failure. */
export type BatchCallbackKind = 'success' | 'complete' | 'failure';

/** The batch a job belongs to, as the job reports it (docs/batches.md). */
export interface JobBatchInfo {
  /** The batch's id, shared by its jobs and its callbacks. */
  readonly id: string;
  /** Set on a callback job; null on a job of the batch itself. */
  readonly callback: BatchCallbackKind | null;
}

/** What the transition history keeps: nothing, each state change, or each change with its error text. */
export type HistoryPolicy = 'off' | 'transitions' | 'transitions_and_errors';

/**
 * What a store does with a job that succeeds: `keep` it (retention deletes it later), or, under
 * `lean`, delete it inside its fenced outcome write when nothing needs it: no dependants, no
 * output, no unique key, and no observer still to be fed its entries (docs/stores.md#lean-finish).
 */
export type FinishMode = 'keep' | 'lean';

/** A sequence, as a job that joined it reports it (docs/sequences.md). */
export interface JobSequenceInfo {
  /** One sequence across every wire name and queue. */
  readonly key: string;
  /** What the job does when the job before it failed for good: wait for an operator (`block`), or run (`continue`). */
  readonly afterFailure: 'block' | 'continue';
}

/**
 * A debounce or throttle window, as a job that opened it reports it (docs/debounce-and-throttle.md).
 * Its key is scoped to the job's wire name.
 */
export interface JobWindowInfo {
  readonly kind: 'debounce' | 'throttle';
  readonly key: string;
  /**
   * A debounce's latest run time, however often its key is enqueued again; the instant a throttle
   * stops dropping the enqueues of its key.
   */
  readonly endsAt: Date;
}

/**
 * True when a job takes the enqueues of its debounce key: a debounced job (`windowKind`) that has
 * not started, scheduled and never claimed. The SQL stores' look-ups and their indexes say the same
 * in SQL; the dashboard says it to operators.
 */
export function takesDebounce(windowKind: 'debounce' | 'throttle' | null | undefined, state: JobState, attempt: number): boolean {
  return windowKind === 'debounce' && state === 'scheduled' && attempt === 0;
}

/** A job as every store reports it. Times are instants taken from the store's clock. */
export interface JobRecord<TPayload = unknown> {
  readonly id: string;
  /** The wire name that selects the handler. */
  readonly name: string;
  readonly queue: string;
  readonly payload: TPayload;
  readonly state: JobState;
  /** The earliest instant a worker may claim the job. */
  readonly runAt: Date;
  /** Claims take due jobs with a lower priority first (-10 to 10, default 0). */
  readonly priority: number;
  /** Attempts charged so far, including a running one. */
  readonly attempt: number;
  /** Attempts allowed, including one more for each snooze. */
  readonly maxAttempts: number;
  /**
   * Times a handler snoozed the job (`ctx.snooze`). Each snooze counted as an attempt and raised
   * `maxAttempts` by one, so snoozes never spend the retry budget.
   */
  readonly snoozes: number;
  /** The worker that holds (or last held) the lease. */
  readonly workerId: string | null;
  readonly leasedUntil: Date | null;
  /** An operator asked to cancel the job while it was running. */
  readonly cancelRequested: boolean;
  readonly lastError: string | null;
  /** What the handler stored with `setOutput` on success. */
  readonly output: unknown;
  /**
   * The last value a handler reported with `reportProgress` (written on the attempt's heartbeat),
   * or null when none was. Kept after the job ends and across retries and replays, until a later
   * attempt reports again: it is the last word of whichever attempt reported last.
   */
  readonly progress: unknown;
  /** The instant this occurrence was meant to fire. */
  readonly scheduledFor: Date;
  /** Deterministic id of this occurrence; the dedupe key for consumers. */
  readonly occurrenceId: string;
  /** The recurring schedule that minted this job, if any. */
  readonly scheduleId: string | null;
  /** Parents still to finish before an `awaiting_parents` job may run (its latch). */
  readonly pendingParents: number;
  /** How parents release the job; null when it has none. */
  readonly dependencyMode: DependencyMode | null;
  /** The key the job counts against for concurrency limits, if any (its group's, unless set apart). */
  readonly concurrencyKey: string | null;
  /** The fair group (a tenant) the job takes turns in at claim time; null when none (docs/groups.md). */
  readonly group: string | null;
  /** The job's unique key: no other unfinished job of its wire name holds the same one. */
  readonly uniqueKey: string | null;
  /** The debounce or throttle window the job opened when it was enqueued; null when none. */
  readonly window: JobWindowInfo | null;
  /**
   * The sequence the job was enqueued into, and what it does after a predecessor that failed for
   * good; null when none. The job it waits behind is an edge: `jobEdges`, or the dashboard's job page.
   */
  readonly sequence: JobSequenceInfo | null;
  /** The batch the job is part of, or is a callback of (`client.enqueueBatch`); null when none. */
  readonly batch: JobBatchInfo | null;
  /**
   * The retry fields set at enqueue, which win over the handler's policy; null when none were set.
   * Fields left out come from the handler's policy on the node that runs the attempt.
   */
  readonly retry: Partial<RetryPolicy> | null;
  /**
   * The W3C trace context of the code that enqueued the job, when tracing was on there: each
   * attempt's span is its child. Null when the job was enqueued without one.
   */
  readonly traceContext: TraceContext | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** Set when the job reaches a terminal state. */
  readonly finishedAt: Date | null;
}
