import type { EntityManager } from 'typeorm';
import type { CancelOutcome, HistoryPolicy, JobRecord, JobState, SchedulerLimits } from '../core/index.js';
import type { AttemptTransaction } from './attempt-transaction.js';
import type { EnqueueInput } from './enqueue-input.js';
import type { QueueSummary } from './job-store.types.js';
import type { StoreCapabilities } from './store-capabilities.js';
import type { WakeListener, WakeSubscription } from './job-store.types.js';
import type { MintResult, Schedule, ScheduleInput, ScheduleUpsertResult } from './schedules/index.js';

/** Who performs an operator action; written to the audit log. Default `api`. */
export interface OperatorOptions {
  readonly actor?: string;
}

/** One entry of the audit log. */
export interface AuditRecord {
  readonly at: Date;
  readonly actor: string;
  /** e.g. `job.replay`, `job.cancel`, `queue.pause`, `schedule.trigger`. */
  readonly action: string;
  /** The job id, schedule id or queue name acted on. */
  readonly target: string;
  readonly detail: unknown;
}

/** One state change in a job's history. `id` orders the whole log and is stable: observers dedupe on it. */
export interface HistoryEntry {
  /** Unique per entry and stable across redeliveries: observers dedupe on it. */
  readonly id: number;
  /**
   * Where the entry sits in delivery order, as an opaque cursor for {@link JobStore.historyRead}.
   * Delivery order is commit order, which on PostgreSQL is not always id order.
   */
  readonly position: string;
  readonly jobId: string;
  readonly name: string;
  readonly at: Date;
  readonly state: JobState;
  readonly attempt: number;
  /** The error the transition recorded (with the `transitions_and_errors` policy). */
  readonly error: string | null;
}

/** An ancestor's output as a dependant sees it; `found` is false for a job that is not an ancestor. */
export interface ParentOutput {
  readonly found: boolean;
  readonly output: unknown;
}

/** What a concurrency limit caps: a queue, or a concurrency key. */
export type LimitTarget = { readonly queue: string } | { readonly key: string };

export type ConcurrencyLimit = LimitTarget & { readonly max: number };

/** A transition observer's place in the history, leased to one delivering worker. */
export interface ObserverLease {
  readonly observer: string;
  /** Entries up to this position were delivered; read on from here. */
  readonly position: string;
  /** Deliveries that failed in a row since the last commit: the base of the retry backoff. */
  readonly failures: number;
}

/** Job counts for operators. */
export interface JobStats {
  /** Jobs per queue and state, sorted by queue, then state. */
  readonly counts: readonly { readonly queue: string; readonly state: JobState; readonly count: number }[];
  /** The `runAt` of the oldest job that is due and waiting, or null when none waits. */
  readonly oldestDueAt: Date | null;
  /** The store's clock when the counts were taken. */
  readonly now: Date;
}

/** Options for writing jobs. */
export interface EnqueueOptions {
  /**
   * A TypeORM EntityManager inside an open transaction on the store's own DataSource. The job rows
   * are written in that transaction and share its commit or rollback. Needs the
   * `transactionalEnqueue` capability.
   */
  readonly manager?: EntityManager;
}

/** What one enqueue wrote. */
export interface EnqueueResult {
  /** The job's id; for a deduplicated enqueue, the id of the job that holds the unique key. */
  readonly id: string;
  /** False when a job with this id already existed, or the unique key was held; no job was written for it. */
  readonly created: boolean;
  /**
   * Set when the `uniqueKey` was held by an unfinished job (`id`): `kept` when that job was left as
   * it was (mode `keep`, or a `replace` of a job that had already started), `replaced` when it took
   * this enqueue's payload and run time.
   */
  readonly deduplicated?: 'kept' | 'replaced';
}

export interface ClaimParams {
  readonly workerId: string;
  /** At most this many jobs; a worker passes its free slots. */
  readonly limit: number;
  readonly queues: readonly string[];
  readonly leaseMs: number;
  /**
   * Also take running jobs whose lease lapsed (default true). A worker searches for those once
   * per poll interval, not on every claim: finding them costs a scan that grows with the jobs
   * finished since the last vacuum, and a lease lapses only when a worker died or stalled.
   */
  readonly includeLapsed?: boolean;
}

/** One lease a worker believes it holds. */
export interface LeaseRef {
  readonly jobId: string;
  readonly attempt: number;
}

export interface HeartbeatParams {
  readonly workerId: string;
  readonly leases: readonly LeaseRef[];
  readonly leaseMs: number;
}

export interface RenewedLease extends LeaseRef {
  readonly leasedUntil: Date;
  /** An operator asked to cancel: abort the attempt. */
  readonly cancelRequested: boolean;
}

export interface HeartbeatResult {
  readonly renewed: readonly RenewedLease[];
  /** Leases this worker no longer holds: abort those attempts at once. */
  readonly lost: readonly LeaseRef[];
}

/** The outcome of one attempt, as its worker reports it. */
export type Outcome =
  | { readonly jobId: string; readonly attempt: number; readonly kind: 'succeeded'; readonly output?: unknown }
  | {
      readonly jobId: string;
      readonly attempt: number;
      readonly kind: 'failed';
      readonly error: string;
      /** Wait this long before the next attempt; ignored when no attempts are left. */
      readonly retryDelayMs: number;
    }
  /** A failure that must not be retried. */
  | { readonly jobId: string; readonly attempt: number; readonly kind: 'dead_lettered'; readonly error: string }
  /** The job cannot run here at all: no handler, or a payload that no longer decodes. */
  | { readonly jobId: string; readonly attempt: number; readonly kind: 'quarantined'; readonly reason: string };

export interface CompleteParams {
  readonly workerId: string;
  readonly outcomes: readonly Outcome[];
}

export interface RelinquishParams {
  readonly workerId: string;
  readonly leases: readonly LeaseRef[];
}

/** What the fenced write did with one report. */
export type OutcomeResult =
  | { readonly jobId: string; readonly attempt: number; readonly status: 'applied'; readonly state: JobState }
  /** The reporter did not hold the live lease; nothing changed. */
  | { readonly jobId: string; readonly attempt: number; readonly status: 'stale' };

export interface ExpireLeasesParams {
  /** Settle at most this many lapsed leases in one pass. */
  readonly limit: number;
}

export interface ExpiredLease {
  readonly jobId: string;
  readonly attempt: number;
  readonly state: JobState;
}

export interface CancelResult {
  readonly job: JobRecord;
  readonly outcome: CancelOutcome;
}

export interface ListJobsParams {
  readonly state?: JobState;
  readonly queue?: string;
  readonly name?: string;
  /** Default 50, at most 1,000. */
  readonly limit?: number;
}

export interface ListDeadLetteredParams {
  /** Default 50, at most 1,000. */
  readonly limit?: number;
}

/**
 * The storage contract. Every adapter implements it with the same behaviour, pinned by the
 * conformance suite in `test/conformance`. Methods are named noun first. Every time comparison uses
 * the store's own clock (the database's `now()`), never the caller's.
 *
 * Bad input is refused with an {@link InvalidArgumentError} before anything is written.
 */
export interface JobStore {
  /** Optional features this adapter offers. */
  readonly capabilities: StoreCapabilities;

  /** The size limits this store enforces. */
  readonly limits: SchedulerLimits;

  /** Which state changes the store appends to job history (`off` records none, and observers get nothing). */
  readonly historyPolicy: HistoryPolicy;

  /** Creates or upgrades the store's tables. Safe to call from several nodes at once. */
  migrate(): Promise<void>;

  /**
   * Writes one job. A job whose id already exists is left alone (`created: false`); so is one whose
   * `uniqueKey` an unfinished job holds, and the result carries the holder's id (`deduplicated`).
   */
  jobEnqueue(input: EnqueueInput, options?: EnqueueOptions): Promise<EnqueueResult>;

  /** Writes many jobs in one transaction: all of them or, on bad input, none. */
  jobEnqueueMany(inputs: readonly EnqueueInput[], options?: EnqueueOptions): Promise<EnqueueResult[]>;

  /**
   * Leases up to `limit` claimable jobs from `queues` (skipping paused ones) in `runAt`, then enqueue
   * order: due `scheduled` jobs, and `running` jobs whose lease lapsed with attempts left and no
   * cancel request. Each comes back `running` with `attempt + 1` and a lease for `workerId`.
   */
  jobClaim(params: ClaimParams): Promise<JobRecord[]>;

  /** Renews the leases `workerId` still holds and reports the ones it lost. */
  jobHeartbeat(params: HeartbeatParams): Promise<HeartbeatResult>;

  /**
   * The fenced outcome write. Each outcome applies only if `workerId` holds the live lease for that
   * exact attempt; otherwise its result is `stale` and the job is untouched.
   */
  jobCompleteMany(params: CompleteParams): Promise<OutcomeResult[]>;

  /**
   * Hands held leases back at once (graceful shutdown): the job is due again with its attempt
   * already charged, or dead-lettered if that was its last attempt. Fenced like an outcome.
   */
  jobRelinquishMany(params: RelinquishParams): Promise<OutcomeResult[]>;

  /**
   * The maintenance sweep: settles lapsed leases no claim will take, dead-lettering exhausted jobs
   * (`lease expired`) and cancelling cancel-requested ones. Paused queues are swept too.
   */
  jobExpireLeases(params: ExpireLeasesParams): Promise<ExpiredLease[]>;

  /**
   * Operator replay: a `dead_lettered` or `quarantined` job is due again now with attempt 0. If it
   * is the occurrence that stopped its schedule, the schedule mints again.
   */
  jobReplay(jobId: string, options?: OperatorOptions): Promise<JobRecord>;

  /**
   * Operator cancel: a waiting job is cancelled at once; a running one gets a cancel request that
   * its next heartbeat reports. Cancelling a cancelled job changes nothing.
   */
  jobCancel(jobId: string, options?: OperatorOptions): Promise<CancelResult>;

  jobGet(jobId: string): Promise<JobRecord | null>;

  /** Jobs, newest first. */
  jobList(params?: ListJobsParams): Promise<JobRecord[]>;

  /** Dead-lettered jobs, most recently dead-lettered first. */
  jobListDeadLettered(params?: ListDeadLetteredParams): Promise<JobRecord[]>;

  /** Stops claims from `queue` without losing its jobs' places. */
  queuePause(queue: string, options?: OperatorOptions): Promise<void>;

  queueResume(queue: string, options?: OperatorOptions): Promise<void>;

  /**
   * Every queue that has a stored job or has been paused, sorted by name, with its pause state
   * and job counts per state. Counts the whole jobs table, as {@link JobStore.jobStats} does.
   */
  queueList(): Promise<QueueSummary[]>;

  /** Creates a recurring schedule, or updates its definition if the id exists. */
  scheduleUpsert(input: ScheduleInput, options?: OperatorOptions): Promise<ScheduleUpsertResult>;

  scheduleGet(scheduleId: string): Promise<Schedule | null>;

  /** All schedules, oldest first. */
  scheduleList(): Promise<Schedule[]>;

  schedulePause(scheduleId: string, options?: OperatorOptions): Promise<Schedule>;

  scheduleResume(scheduleId: string, options?: OperatorOptions): Promise<Schedule>;

  /** Mints one occurrence now, outside the pattern. */
  scheduleTrigger(scheduleId: string, options?: OperatorOptions): Promise<EnqueueResult>;

  /** Deletes a schedule; its jobs stay. False when there was none. */
  scheduleRemove(scheduleId: string, options?: OperatorOptions): Promise<boolean>;

  /** Replays the occurrence that dead-lettered a schedule and lets the schedule mint again. */
  scheduleReplay(scheduleId: string, options?: OperatorOptions): Promise<{ schedule: Schedule; job: JobRecord | null }>;

  /** One minting pass over due schedules (workers run it on a timer). */
  scheduleMintDue(params: { readonly limit: number }): Promise<MintResult>;

  /** Counts per queue and state, and the oldest due job. */
  jobStats(): Promise<JobStats>;

  /**
   * An ancestor's output, read by a dependant. Absent (`found: false`) when `ancestorId` is not
   * among the job's ancestors, or did not store output.
   */
  jobParentOutput(jobId: string, ancestorId: string): Promise<ParentOutput>;

  /**
   * Settles dependency edges of finished parents that the outcome write did not settle itself (a
   * fan-out beyond its share, a cascade, an edge written while its parent finished). Each edge
   * settles once. Returns how many it settled.
   */
  jobSettleDependencies(params: { readonly limit: number }): Promise<number>;

  /** Sets (or, with null, removes) the cap on running jobs of a queue or a concurrency key. Audited. */
  concurrencyLimitSet(target: LimitTarget, max: number | null, options?: OperatorOptions): Promise<void>;

  concurrencyLimitList(): Promise<ConcurrencyLimit[]>;

  /** A job's state changes, oldest first. */
  jobHistory(jobId: string): Promise<HistoryEntry[]>;

  /**
   * The history log after position `after` (from the start when absent), in delivery order: what
   * observers are fed. Only entries whose transactions have finished are returned, so an entry
   * committed late can never land behind a position already handed out.
   */
  historyRead(params: { readonly after?: string; readonly limit: number }): Promise<HistoryEntry[]>;

  /** Keeps the newest `keep` entries per job, never removing one an observer has not passed yet. */
  historyTrim(params: { readonly keep: number; readonly limit: number }): Promise<number>;

  /**
   * Takes the delivery lease of an observer's cursor, unless another worker holds it or it is
   * backing off. An observer seen for the first time starts at the end of the log.
   */
  observerLease(params: { readonly observer: string; readonly workerId: string; readonly leaseMs: number }): Promise<ObserverLease | null>;

  /** Moves the cursor past delivered entries. Fenced on the lease: false when the lease was lost. */
  observerCommit(params: { readonly observer: string; readonly workerId: string; readonly position: string }): Promise<boolean>;

  /** Records a failed delivery; the cursor stays and retries after `retryDelayMs`. Fenced on the lease. */
  observerFail(params: { readonly observer: string; readonly workerId: string; readonly error: string; readonly retryDelayMs: number }): Promise<boolean>;

  /** Deletes succeeded and cancelled jobs finished more than `olderThanMs` ago, with their history and edges. */
  jobPurge(params: { readonly olderThanMs: number; readonly limit: number }): Promise<number>;

  /** The newest migration applied, or null when the store's tables do not exist yet. */
  schemaVersion(): Promise<number | null>;

  /** The audit log, newest first. */
  auditList(params?: { readonly limit?: number }): Promise<AuditRecord[]>;

  /**
   * Calls `listener` with a queue name when work there may have become due. What reaches the
   * listener depends on `capabilities.wakeHints`; a store without hints never calls it.
   */
  subscribeWakeHints(listener: WakeListener): Promise<WakeSubscription>;

  /**
   * Starts an attempt transaction (see {@link AttemptTransaction}). Only on stores with the
   * `attemptTransactions` capability; others throw CapabilityNotSupportedError.
   */
  beginAttempt(): AttemptTransaction;

  /** Releases what the adapter holds itself. The DataSource it was given stays open. */
  close(): Promise<void>;
}
