// The input of an enqueue. A leaf type file, so the contract can name it without importing the
// normalizer in enqueue-input.ts.
import type { DependencyMode, RetryPolicy, TraceContext } from '../core/index.js';

/** A job to write. */
export interface EnqueueInput<TPayload = unknown> {
  /** The wire name of the handler. */
  readonly name: string;
  /** Any JSON value. */
  readonly payload: TPayload;
  /** A caller-chosen UUID; a UUIDv7 is generated otherwise. */
  readonly id?: string;
  readonly queue?: string;
  /** Run at this instant (at the earliest). Exclusive with `delayMs`. */
  readonly runAt?: Date;
  /** Run this long after the store's current instant. Exclusive with `runAt`. */
  readonly delayMs?: number;
  /**
   * Claims take due jobs with a lower priority first, then by run time, then in enqueue order: a
   * whole number from -10 (first) to 10 (last). Default 0, or the job's `@Job` default.
   */
  readonly priority?: number;
  /** Attempts before the job is dead-lettered. Default 10. */
  readonly maxAttempts?: number;
  /**
   * Jobs that must finish first. They must exist (or be earlier in the same `enqueueMany` batch);
   * the job waits in `awaiting_parents` until they do.
   */
  readonly dependsOn?: readonly string[];
  /** How parents release the job. Default `on_success`. */
  readonly dependencyMode?: DependencyMode;
  /**
   * The fair group the job belongs to (a tenant id, an account): claims take turns across the
   * groups that have due work, so a group with a large backlog cannot starve one with a single
   * job. Within a priority, groups take turns; a more urgent priority still comes first. The job's
   * `concurrencyKey` defaults to its group, so a group's limits are set like any key's
   * (docs/groups.md).
   */
  readonly group?: string;
  /** A key (a tenant, an account) whose running jobs are capped by a concurrency limit. Default: the job's `group`. */
  readonly concurrencyKey?: string;
  /**
   * The cap for `concurrencyKey`, if the key has none yet. The first limit declared for a key
   * stands until an operator changes it.
   */
  readonly concurrencyLimit?: number;
  /**
   * The rate limit for `concurrencyKey`, if the key has none yet: at most `max` starts in any
   * window of `perMs`. The first rate declared for a key stands until an operator changes it.
   */
  readonly rateLimit?: Rate;
  /**
   * At most one unfinished job (scheduled, awaiting parents or running) of this wire name holds a
   * key. An enqueue whose key is held writes no new job and returns the holder's id.
   */
  readonly uniqueKey?: string;
  /**
   * What an enqueue whose `uniqueKey` is held does: `keep` (default) leaves the holder as it is;
   * `replace` gives it this enqueue's payload and run time if it has not started (never claimed).
   */
  readonly uniqueKeyMode?: UniqueKeyMode;
  /**
   * Trailing debounce: while a job of this wire name with this key has not started, an enqueue
   * with the key gives it this payload and pushes its run time to `windowMs` from now, but never
   * past `maxDelayMs` after the key's first enqueue. Not with `runAt`, `delayMs`, `uniqueKey`,
   * `dependsOn` or `throttle` (docs/debounce-and-throttle.md).
   */
  readonly debounce?: DebounceOptions;
  /**
   * Leading throttle: the first enqueue of this wire name with this key opens a window of
   * `windowMs`; an enqueue with the key inside the window writes no job and returns the opener's
   * id (`deduplicated: 'throttled'`). Not with `uniqueKey`, `dependsOn` or `debounce`.
   */
  readonly throttle?: ThrottleOptions;
  /**
   * Strict order: jobs with the same sequence key run one at a time, in the order they were
   * enqueued (committed), whatever their wire name or queue. Not with `uniqueKey`, `debounce` or
   * `throttle` (docs/sequences.md).
   */
  readonly sequence?: SequenceOptions;
  /** Retry fields for this job, over the handler's policy (each one optional). */
  readonly retry?: Partial<RetryPolicy>;
  /**
   * The W3C trace context each attempt's span continues. The client fills it in from the active
   * span when OpenTelemetry is on; set it yourself to continue a trace from elsewhere.
   */
  readonly traceContext?: TraceContext;
}

/** See {@link EnqueueInput.debounce}. */
export interface DebounceOptions {
  /** 1 to 200 characters without control characters; scoped to the job's wire name. */
  readonly key: string;
  /** The quiet time, in milliseconds: a whole number from 1 to 2,592,000,000 (30 days). */
  readonly windowMs: number;
  /**
   * The latest the job runs after the key's first enqueue, however often the key is enqueued
   * again: from `windowMs` to 30 days. Default ten windows (at most 30 days).
   */
  readonly maxDelayMs?: number;
}

/** See {@link EnqueueInput.throttle}. */
export interface ThrottleOptions {
  /** 1 to 200 characters without control characters; scoped to the job's wire name. */
  readonly key: string;
  /** The window, in milliseconds: a whole number from 1 to 2,592,000,000 (30 days). */
  readonly windowMs: number;
}

/** See {@link EnqueueInput.sequence}. */
export interface SequenceOptions {
  /** 1 to 200 characters without control characters; one sequence across every wire name and queue. */
  readonly key: string;
  /**
   * What this job does when the job before it in the sequence failed for good (dead-lettered or
   * quarantined): `block` (default) waits until an operator replays that job and it succeeds, or
   * cancels it; `continue` runs anyway, as after a success.
   */
  readonly afterFailure?: SequenceAfterFailure;
}

/** See {@link SequenceOptions.afterFailure}. */
export type SequenceAfterFailure = 'block' | 'continue';

/** See {@link EnqueueInput.uniqueKeyMode}. */
export type UniqueKeyMode = 'keep' | 'replace';

/** A rate: at most `max` starts in any window of `perMs` milliseconds. */
export interface Rate {
  /** Starts per window: a whole number from 1 to 10,000. */
  readonly max: number;
  /** The window's length in milliseconds: a whole number from 1 to 86,400,000 (a day). */
  readonly perMs: number;
}
