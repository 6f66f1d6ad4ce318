// The store contract: its records, params and results, and the role interfaces a JobStore is
// made of. Type-only, and a leaf of lib/store: it imports types from lib/core and from small
// type files only, never from an implementation, so nothing here can close an import cycle.
import type { EntityManager } from 'typeorm';
import type { BatchCallbackKind, CancelOutcome, FinishMode, HistoryPolicy, JobRecord, JobState, SchedulerLimits, TraceContext } from '../core/index.js';
import type { EnqueueInput, Rate } from './enqueue-input.types.js';
import type { StoreCapabilities } from './store-capabilities.js';
import type { MintResult, Schedule, ScheduleInput, ScheduleReplayResult, ScheduleUpsertResult } from './schedules/schedule.types.js';

// Records and results.

/** Who performs an operator action; written to the audit log. Default `api`. */
export interface OperatorOptions {
  readonly actor?: string;
}

/** One entry of the audit log. */
export interface AuditRecord {
  /** Orders the log: a later entry has a larger id. */
  readonly id: number;
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
   * Where the entry sits in delivery order, as an opaque cursor for {@link ObserverStore.historyRead}.
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
  /**
   * The worker the change gave the lease to (an entry into `running`) or took it from (an entry
   * out of `running`); null where no lease was involved, and on entries from before schema 26.
   */
  readonly workerId: string | null;
  /** For an entry out of `running`: the deadline of the lease the change ended, which the store judged the change against. */
  readonly leaseUntil: Date | null;
}

/** An ancestor's output as a dependant sees it; `found` is false for a job that is not an ancestor. */
export interface ParentOutput {
  readonly found: boolean;
  readonly output: unknown;
}

/** What a concurrency limit caps: a queue, or a concurrency key. */
export type LimitTarget = { readonly queue: string } | { readonly key: string };

/** A concurrency limit as stored: the queue or concurrency key it caps, and the most of its jobs that may run at once. */
export type ConcurrencyLimit = LimitTarget & { readonly max: number };

/**
 * A rate limit as stored: the queue or concurrency key it governs and its rate. A start is a claim
 * that leases one of its jobs, a lapsed lease's reclaim included, whatever the attempt's outcome.
 */
export type RateLimit = LimitTarget & Rate;

/** A rate limit's state now ({@link OperatorStore.rateLimitStatus}). */
export interface RateLimitStatus extends Rate {
  /** Starts counted in the window that ends now (at most `max`). */
  readonly startsInWindow: number;
  /** While every start of the window is used: when the next one frees, by the store's clock; otherwise null. */
  readonly fullUntil: Date | null;
  /** The store's clock when it was read. */
  readonly now: Date;
}

/** A transition observer's place in the history, leased to one delivering worker. */
export interface ObserverLease {
  readonly observer: string;
  /** Entries up to this position were delivered; read on from here. */
  readonly position: string;
  /** Deliveries that failed in a row since the last commit: the base of the retry backoff. */
  readonly failures: number;
}

/** How many observers {@link OperatorStore.observerList} returns. */
export interface ObserverListParams {
  /** Default 100, at most 1,000. */
  readonly limit?: number;
}

/**
 * A transition observer's cursor as an operator sees it ({@link OperatorStore.observerList}): where
 * it is in the history log, who delivers for it now, how its deliveries have been failing, and how
 * far it is behind.
 */
export interface ObserverStatus {
  /** The observer's id: the name its cursor is kept under. */
  readonly observer: string;
  /** Entries up to this position were delivered, as {@link ObserverLease.position}. */
  readonly position: string;
  /** The worker holding the cursor's delivery lease now; null when no lease is live (by the store's clock). */
  readonly leasedBy: string | null;
  /** When that lease ends; null with `leasedBy`. */
  readonly leasedUntil: Date | null;
  /** Deliveries that failed in a row since the last commit (0 after a commit). */
  readonly failures: number;
  /**
   * When the backoff after the last failed delivery ends: the cursor is not leased before then. Kept
   * until the next commit, so it can be in the past; null when nothing failed since the last commit.
   */
  readonly retryAt: Date | null;
  /** The error of the last failed delivery (cut to the store's error size); null after a commit. */
  readonly lastError: string | null;
  /** The store's clock when the cursor was last leased, moved or failed. */
  readonly updatedAt: Date;
  /**
   * History entries after `position` that the observer would be fed now (the same entries, in the
   * same commit-safe order, as {@link ObserverStore.historyRead} after `position` returns), counted
   * up to 10,000. Every entry counts, whether or not the observer's `to` and `job` filters match it.
   */
  readonly lagEntries: number;
  /** True when more than 10,000 entries lie after `position`: `lagEntries` is then 10,000, a lower bound. */
  readonly lagCapped: boolean;
  /** The `at` of the first entry after `position` (the oldest the observer has not been fed), or null when it is caught up. */
  readonly oldestUndeliveredAt: Date | null;
}

/** How many jobs of one queue are in one state. */
export interface JobStateCount {
  readonly queue: string;
  readonly state: JobState;
  readonly count: number;
}

/** Job counts for operators. */
export interface JobStats {
  /** Jobs per queue and state, sorted by queue, then state. */
  readonly counts: readonly JobStateCount[];
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
  /**
   * The job's id; for a deduplicated enqueue, the id of the job that holds the unique key, took the
   * debounce, or opened the throttle window.
   */
  readonly id: string;
  /** False when a job with this id already existed, or the enqueue was deduplicated; no job was written for it. */
  readonly created: boolean;
  /**
   * Set when the `uniqueKey` was held by an unfinished job (`id`): `kept` when that job was left as
   * it was (mode `keep`, or a `replace` of a job that had already started), `replaced` when it took
   * this enqueue's payload and run time. `debounced` and `throttled`: see {@link Deduplicated}.
   */
  readonly deduplicated?: Deduplicated;
}

/**
 * What an enqueue that wrote no job of its own did: `kept` and `replaced` for a held unique key (see
 * {@link EnqueueResult.deduplicated}), `debounced` when a debounced job that had not started took
 * its payload and run time, `throttled` when a throttle window of its key was open.
 */
export type Deduplicated = 'kept' | 'replaced' | 'debounced' | 'throttled';

/** What a worker asks of {@link WorkerStore.jobClaim}: due jobs of `queues`, leased to `workerId` for `leaseMs`. */
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

/**
 * A lease a heartbeat renews, with the progress the attempt reported since the last renewal, if any.
 * The progress is written in the renewal's own statement, under the same fence: it lands exactly
 * when the lease is renewed, and a lost lease's progress is refused with it.
 */
export interface HeartbeatLease extends LeaseRef {
  /** A JSON value within `maxProgressBytes`; left out when the attempt reported nothing new. */
  readonly progress?: unknown;
}

/**
 * A worker's renewal of the leases it believes it holds, each extended by `leaseMs` from the store's
 * clock. A lease reported renewed had its progress written; one reported lost had it refused.
 */
export interface HeartbeatParams {
  readonly workerId: string;
  readonly leases: readonly HeartbeatLease[];
  readonly leaseMs: number;
}

/** A lease a heartbeat extended, with its new end and whether an operator asked to cancel its job. */
export interface RenewedLease extends LeaseRef {
  readonly leasedUntil: Date;
  /** An operator asked to cancel: abort the attempt. */
  readonly cancelRequested: boolean;
}

/** What a heartbeat found: the leases it renewed, and the ones this worker lost. */
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
  /**
   * The handler asked to run again after `delayMs` (`ctx.snooze`): the job is rescheduled without an
   * error, and its `maxAttempts` grows by one so the snoozed attempt does not spend the retry budget.
   * A cancel request wins: the job ends `cancelled`.
   */
  | { readonly jobId: string; readonly attempt: number; readonly kind: 'snoozed'; readonly delayMs: number }
  /** The job cannot run here at all: no handler, or a payload that no longer decodes. */
  | { readonly jobId: string; readonly attempt: number; readonly kind: 'quarantined'; readonly reason: string };

/** The outcomes one worker reports, each written only if that worker holds the attempt's live lease. */
export interface CompleteParams {
  readonly workerId: string;
  readonly outcomes: readonly Outcome[];
}

/**
 * A worker's outcomes and its next claim in one call ({@link WorkerStore.jobCompleteAndClaim}):
 * `outcomes` as for jobCompleteMany, `claim` as for jobClaim, both for `workerId`.
 */
export interface CompleteAndClaimParams {
  readonly workerId: string;
  readonly outcomes: readonly Outcome[];
  readonly claim: Omit<ClaimParams, 'workerId'>;
}

/** What {@link WorkerStore.jobCompleteAndClaim} did: each outcome's result, and the jobs it leased. */
export interface CompleteAndClaimResult {
  readonly results: OutcomeResult[];
  readonly jobs: JobRecord[];
  /**
   * Set when the outcomes were written but the claim after them failed (it then leased nothing):
   * a store that cannot claim in the outcomes' own statement claims in a second one.
   */
  readonly claimError?: unknown;
}

/** Leases a draining worker hands back without an outcome ({@link WorkerStore.jobRelinquishMany}), fenced like an outcome. */
export interface RelinquishParams {
  readonly workerId: string;
  readonly leases: readonly LeaseRef[];
}

/** What the fenced write did with one report. */
export type OutcomeResult =
  | { readonly jobId: string; readonly attempt: number; readonly status: 'applied'; readonly state: JobState }
  /** The reporter did not hold the live lease; nothing changed. */
  | { readonly jobId: string; readonly attempt: number; readonly status: 'stale' };

/** One pass of the lapsed-lease sweep ({@link MaintenanceStore.jobExpireLeases}). */
export interface ExpireLeasesParams {
  /** Settle at most this many lapsed leases in one pass. */
  readonly limit: number;
}

/** A lapsed lease the sweep settled: the job, the attempt whose lease lapsed, and the state it left the job in. */
export interface ExpiredLease {
  readonly jobId: string;
  readonly attempt: number;
  readonly state: JobState;
}

/**
 * What an operator's cancel did: the job as it now stands, and whether it was cancelled at once, asked to
 * stop (it is running), or already cancelled or asked.
 */
export interface CancelResult {
  readonly job: JobRecord;
  readonly outcome: CancelOutcome;
}

/**
 * Filters of an operator's job listing ({@link OperatorStore.jobListPage}, {@link OperatorStore.jobList}):
 * each given filter must match, newest jobs (in enqueue order) first unless `order` says otherwise.
 */
export interface ListJobsParams {
  readonly state?: JobState;
  readonly queue?: string;
  readonly name?: string;
  /**
   * The start of a job id, as hex digits (`0190a5a0`) or in the id's own spelling (`0190a5a0-00`),
   * any case, 1 to 32 digits. Like `queue` and `name`, it filters the jobs a page examines; it does
   * not look the id up (use {@link OperatorStore.jobGet} for a whole id). A prefix that cannot
   * start a UUID is refused with an {@link InvalidArgumentError}.
   */
  readonly idPrefix?: string;
  /**
   * Only jobs enqueued at or after this instant (their `createdAt`, by the store's clock). A filter
   * on the jobs examined, like `queue`: a page still reads at most 10,000 jobs in enqueue order, so
   * a range far from the page's start gives short or empty pages whose `next` leads on.
   */
  readonly enqueuedAfter?: Date;
  /** Only jobs enqueued before this instant (exclusive); a filter like {@link ListJobsParams.enqueuedAfter}. */
  readonly enqueuedBefore?: Date;
  /**
   * `newest` (default): newest first, paged with `before`. `oldest`: oldest first, paged with
   * `after`. Both read the same index, forwards or backwards, under the same 10,000-job bound.
   */
  readonly order?: 'newest' | 'oldest';
  /** Default 50, at most 1,000. */
  readonly limit?: number;
  /**
   * A job id, usually the `next` of the previous page: only jobs enqueued before that job are
   * listed. An id that names no stored job (it may have been purged since the page that named
   * it) is refused with an {@link InvalidArgumentError}. Only with the `newest` order.
   */
  readonly before?: string;
  /** The cursor of the `oldest` order: only jobs enqueued after the job it names. As `before` otherwise. */
  readonly after?: string;
}

/** One page of a job listing ({@link OperatorStore.jobListPage}). */
export interface JobPage {
  /** At most `limit` jobs, newest first (or oldest first, with the `oldest` order). */
  readonly jobs: JobRecord[];
  /**
   * The cursor of the following page (its `before`, or its `after` with the `oldest` order), or
   * null when no job is left to look at. A page can hold fewer jobs than asked for and still have
   * a `next`: each page examines at most 10,000 jobs (in enqueue order, of the asked state or of
   * all), so a filter on a rare queue, name, id prefix or time range stops early instead of
   * reading the whole table, and `next` says where it stopped.
   */
  readonly next: string | null;
}

/** Which job's dependency edges {@link OperatorStore.jobEdges} reads, and how many per side. */
export interface JobEdgesParams {
  readonly jobId: string;
  /** The most edges returned per side (parents, dependants). Default 100, at most 1,000. */
  readonly limit?: number;
}

/** The job at the other end of a dependency edge, and where the edge stands. */
export interface EdgeJob {
  readonly id: string;
  readonly name: string;
  readonly queue: string;
  readonly state: JobState;
  /** The parent's end has been counted toward the dependant's latch (each edge settles once). */
  readonly settled: boolean;
  /**
   * The edge settled and released its share of the latch: the parent succeeded, or ended in any
   * terminal state for a dependant in mode `on_any_terminal`. A settled edge that is not satisfied
   * cancelled its dependant. Judged on the parent's present state, so a parent replayed after its
   * failure cancelled the dependant reads as satisfied once it succeeds.
   */
  readonly satisfied: boolean;
  /**
   * Set when the edge is a sequence's order rather than a `dependsOn`: the dependant runs after the
   * parent in their sequence, with the dependant's `afterFailure` (`block` leaves the edge open
   * while the parent is dead-lettered or quarantined). Null for a `dependsOn` edge.
   */
  readonly sequence: 'block' | 'continue' | null;
  /** The trace context the other job was enqueued with, or null: a dependant's attempt span links to its parents' by it. */
  readonly traceContext: TraceContext | null;
}

/** A job's dependency edges ({@link OperatorStore.jobEdges}). */
export interface JobEdges {
  /** The jobs this job waits for (its `dependsOn`), at most `limit`. */
  readonly parents: EdgeJob[];
  /** True when the job has more parents than returned. */
  readonly parentsTruncated: boolean;
  /** The jobs that wait for this one, at most `limit`. */
  readonly dependants: EdgeJob[];
  /** True when the job has more dependants than returned; which ones a truncated side shows is not specified. */
  readonly dependantsTruncated: boolean;
}

/** Whose holders {@link OperatorStore.limitHolders} reads. */
export interface LimitHoldersParams {
  readonly target: LimitTarget;
  /** The most holders returned. Default 50, at most 1,000. */
  readonly limit?: number;
}

/** A running job that holds a slot of a concurrency limit. */
export interface LimitHolder {
  readonly jobId: string;
  readonly name: string;
  readonly queue: string;
  readonly workerId: string;
  readonly attempt: number;
  readonly leasedUntil: Date;
}

/** The jobs that hold a limit's slots now ({@link OperatorStore.limitHolders}). */
export interface LimitHolders {
  /** The limit's cap, or null when the queue or key has no limit (then nothing holds a slot). */
  readonly max: number | null;
  /** Holders whose lease is live, soonest lease end first, at most `limit`. */
  readonly holders: LimitHolder[];
  /** True when more jobs hold slots than returned. */
  readonly truncated: boolean;
}

/** Which queues {@link OperatorStore.queueOldestDue} reports on. */
export interface QueueOldestDueParams {
  /** The queues to report, at most 1,000; every queue with a due job among those examined when absent. */
  readonly queues?: readonly string[];
}

/** The run time of a queue's oldest due job: how long its work has waited to be claimed. */
export interface QueueOldestDue {
  readonly queue: string;
  /** The `runAt` of the queue's oldest `scheduled` job due now, or null when none was found. */
  readonly oldestDueAt: Date | null;
  /**
   * How many of the queue's jobs are due now among those examined: exact when
   * {@link QueueOldestDueResult.examinedUntil} is null, a lower bound otherwise.
   */
  readonly dueCount: number;
}

/** Per queue, the oldest due job ({@link OperatorStore.queueOldestDue}). */
export interface QueueOldestDueResult {
  /** One entry per asked queue, in the order asked; without `queues`, one per queue found, by name. */
  readonly queues: QueueOldestDue[];
  /**
   * Null when every due job was examined, so a queue with `oldestDueAt: null` has nothing due.
   * Otherwise the `runAt` where the read stopped (it examines at most 10,000 due jobs, oldest
   * first): a queue reported without a due job has none due before this instant, but may have
   * some at or after it.
   */
  readonly examinedUntil: Date | null;
  /**
   * How many due jobs the read examined, in every queue: the number due now when `examinedUntil`
   * is null, and a bound reached (10,000, shown as "10,000+") otherwise.
   */
  readonly dueExamined: number;
  /** The store's clock at the read. */
  readonly now: Date;
}

/** The window and buckets of {@link OperatorStore.jobThroughput}. */
export interface JobThroughputParams {
  /** The start of the first bucket. At most 1,440 buckets are returned (the newest, when `since` is further back). */
  readonly since: Date;
  /** Each bucket's width, from 1,000 ms to one day. */
  readonly bucketMs: number;
  /** Only jobs of this queue. */
  readonly queue?: string;
}

/** The jobs that finished within one bucket, by how they ended. */
export interface ThroughputBucket {
  /** The bucket covers `[start, start + bucketMs)`. */
  readonly start: Date;
  readonly succeeded: number;
  readonly deadLettered: number;
  readonly cancelled: number;
}

/** Finished jobs per time bucket ({@link OperatorStore.jobThroughput}). */
export interface JobThroughput {
  /** Consecutive buckets from the first at or after `since` up to the one holding `now`, oldest first. */
  readonly buckets: ThroughputBucket[];
  /**
   * Null when every job that finished in the window was counted. Otherwise the read reached its
   * cap (the newest 50,000 succeeded or cancelled jobs, and separately the newest 50,000
   * dead-lettered ones, examined whatever their queue) before the window's start: counts of jobs
   * that finished at or before this instant are partial, and the buckets that start before it
   * are lower bounds.
   */
  readonly partialUntil: Date | null;
  /** The store's clock at the read. */
  readonly now: Date;
}

/** One fold of the counts' pending changes ({@link MaintenanceStore.jobCountsFold}). */
export interface JobCountsFoldParams {
  /** Fold at most this many pending change rows. */
  readonly limit: number;
}

/** One page of schedules ({@link ScheduleStore.scheduleList}), oldest first. */
export interface ScheduleListParams {
  /** Default 50, at most 1,000. */
  readonly limit?: number;
  /**
   * A schedule's id: the page holds the schedules created after it. Pass the last id of a full
   * page to read the next one.
   */
  readonly after?: string;
}

/**
 * A batch to write ({@link ProducerStore.jobEnqueueBatch}): its jobs, and up to three callback jobs
 * that wait for all of them. Every job gets a fresh id; none may carry `id`, `uniqueKey`,
 * `debounce` or `throttle` (each may write no job of its own), and a callback may not carry
 * `dependsOn`, `dependencyMode` or `sequence` (the batch sets what it waits for).
 */
export interface EnqueueBatchParams extends EnqueueOptions {
  /** At least one. */
  readonly jobs: readonly EnqueueInput[];
  /** Runs once every job of the batch succeeded; cancelled as soon as one fails for good or is cancelled. */
  readonly onSuccess?: EnqueueInput;
  /** Runs once every job of the batch ended, however each ended. */
  readonly onComplete?: EnqueueInput;
  /** Runs once every job of the batch ended and at least one did not succeed; cancelled when all succeeded. */
  readonly onFailure?: EnqueueInput;
}

/** What {@link ProducerStore.jobEnqueueBatch} wrote: the batch's id, its jobs in the order given, and its callbacks' ids. */
export interface EnqueueBatchResult {
  readonly batchId: string;
  readonly jobs: EnqueueResult[];
  readonly callbacks: BatchCallbackIds;
}

/** The ids of a batch's callback jobs, by kind; a kind the batch has no callback for is absent. */
export interface BatchCallbackIds {
  readonly onSuccess?: string;
  readonly onComplete?: string;
  readonly onFailure?: string;
}

/** A batch's callback job, as {@link BatchSummary} reports it. */
export interface BatchCallbackJob {
  readonly kind: BatchCallbackKind;
  readonly jobId: string;
  readonly state: JobState;
}

/**
 * A batch as its stored jobs tell it, counted when read: jobs that retention deleted are not
 * counted. `failed` counts jobs that are dead-lettered or quarantined; a replay of one of them
 * moves it back to `pending`, but the callbacks already ran or were cancelled and do not run again.
 */
export interface BatchSummary {
  readonly id: string;
  /** The batch's jobs still stored, callbacks not counted. */
  readonly total: number;
  /** Jobs that have not ended: waiting, scheduled or running. */
  readonly pending: number;
  readonly succeeded: number;
  /** Jobs dead-lettered or quarantined. */
  readonly failed: number;
  readonly cancelled: number;
  /** True once no job of the batch is pending. */
  readonly ended: boolean;
  /** The ids of the failed jobs, in id order, at most `failedLimit` of them ({@link BatchParams}). */
  readonly failedJobIds: string[];
  readonly callbacks: BatchCallbackJob[];
  /** When the batch was written: its first job's `createdAt`. */
  readonly createdAt: Date;
}

/** Which batch {@link OperatorStore.jobBatch} reads. */
export interface BatchParams {
  readonly batchId: string;
  /** How many failed job ids to return: default 1,000, 0 to 10,000. */
  readonly failedLimit?: number;
}

/** Which batches {@link OperatorStore.jobListBatches} returns: newest first. */
export interface ListBatchesParams {
  /** Default 50, at most 200. */
  readonly limit?: number;
  /** A batch id: the page holds the batches written before it. Pass the last id of a full page to read the next one. */
  readonly before?: string;
}

/** An operator's cancel of a whole batch ({@link OperatorStore.jobCancelBatch}). */
export interface BatchCancelParams extends OperatorOptions {
  readonly batchId: string;
}

/** What {@link OperatorStore.jobCancelBatch} did to the batch's jobs that had not ended. */
export interface BatchCancelResult {
  /** Waiting or scheduled jobs (callbacks included) cancelled at once. */
  readonly cancelled: number;
  /** Running jobs asked to stop; each ends when its worker sees the request. */
  readonly cancelRequested: number;
}

/** Which blocked sequences {@link OperatorStore.jobListBlockedSequences} returns. */
export interface ListBlockedSequencesParams {
  /** Default 50, at most 1,000. */
  readonly limit?: number;
  /** A sequence key: the page holds the keys after it. Pass the last key of a full page to read the next one. */
  readonly after?: string;
}

/**
 * A sequence held up by a job that failed for good: its next job waits (in `block` mode) until an
 * operator replays the failed job and it succeeds, or cancels it.
 */
export interface BlockedSequence {
  readonly key: string;
  /** The dead-lettered or quarantined job that holds the sequence, with its last error. */
  readonly job: JobRecord;
  /** The job behind it: waiting, or cancelled before its turn and still holding the line for the next. */
  readonly nextJobId: string;
}

/** Which groups {@link OperatorStore.jobListGroups} returns. */
export interface ListGroupsParams {
  /** Default 50, at most 200: each group on a page costs up to two thousand index entries of counting. */
  readonly limit?: number;
  /** A group: the page holds the groups after it. Pass the last group of a full page to read the next one. */
  readonly after?: string;
}

/** How far {@link OperatorStore.jobListGroups} counts a group's waiting jobs of each kind. */
export const GROUP_COUNT_CAP = 1_000;

/**
 * A group (docs/groups.md) with jobs waiting: scheduled, due now or later. Running jobs are not
 * counted here; a group's cap on the limits page shows the jobs that hold it.
 */
export interface WaitingGroup {
  readonly group: string;
  /** Jobs of the group whose run time has come, counted up to {@link GROUP_COUNT_CAP}. */
  readonly due: number;
  /** True when more than {@link GROUP_COUNT_CAP} jobs are due: `due` is then a lower bound. */
  readonly dueCapped: boolean;
  /** Jobs of the group scheduled for later, counted up to {@link GROUP_COUNT_CAP}. */
  readonly later: number;
  /** True when more than {@link GROUP_COUNT_CAP} jobs wait for later: `later` is then a lower bound. */
  readonly laterCapped: boolean;
  /** The run time of the group's longest-waiting due job (how long the group has waited), or null when none is due. */
  readonly oldestDueAt: Date | null;
  /** The cap of the concurrency limit on the group's key (a group's limit, set like any key's), or null when it has none. */
  readonly concurrencyMax: number | null;
}

/** How many dead-lettered jobs {@link OperatorStore.jobListDeadLettered} returns. */
export interface ListDeadLetteredParams {
  /** Default 50, at most 1,000. */
  readonly limit?: number;
}

/**
 * Which queues {@link OperatorStore.queueList} returns: a page in name order, or the named ones.
 * Without params, every queue.
 */
export interface QueueListParams {
  /** A page of at most this many queues (1 to 1,000), in name order as the store compares text. */
  readonly limit?: number;
  /** With `limit`: the page of queues whose names come after this one (the last name of a full page). */
  readonly after?: string;
  /** Only these queues (at most 1,000), in name order; a name no queue has is left out. Not with `limit` or `after`. */
  readonly queues?: readonly string[];
}

/** Stored jobs per state over every queue ({@link OperatorStore.jobCountTotals}). */
export interface JobCountTotals {
  /** Stored jobs per state, summed over the queues; a state with none is absent. */
  readonly counts: Readonly<Partial<Record<JobState, number>>>;
  /** How many queues {@link OperatorStore.queueList} lists without params. */
  readonly queues: number;
}

/**
 * What holds back the database's cleanup of the jobs table ({@link OperatorStore.storeHealth}). On
 * PostgreSQL, a row a claim or an outcome replaced stays until vacuum removes it, and vacuum removes
 * none that the oldest open snapshot may still see: while a transaction stays open, the claim has
 * more dead rows to pass. Fields a store cannot tell are null: all of them on SQLite and in memory,
 * which keep no old row versions.
 */
export interface StoreHealth {
  /**
   * The oldest transaction of another session on this database that holds the horizon back (it has
   * an xid or a snapshot), or null when there is none or the store's role may not see it: on
   * PostgreSQL other roles' sessions need `pg_read_all_stats`.
   */
  readonly oldestTransaction: { readonly ageMs: number; readonly pid: number; readonly state: string } | null;
  /** Transactions begun since the oldest one still running (PostgreSQL: from the snapshot, visible to every role). */
  readonly horizonXids: number | null;
  /** Dead and live rows of the jobs table, as the database's statistics last counted them. */
  readonly deadJobRows: number | null;
  readonly liveJobRows: number | null;
  /** When the jobs table was last vacuumed, by hand or by autovacuum; null if never (or unknown). */
  readonly lastVacuumAt: Date | null;
}

/** A job's history, whole or a page of its newest entries ({@link OperatorStore.jobHistory}). */
export interface JobHistoryParams extends JobRef {
  /** The newest entries only, at most this many (1 to 1,000), still oldest first. Every entry when absent. */
  readonly limit?: number;
  /** With `limit`: entries older than the entry of this id (the first id of a page already read). */
  readonly before?: number;
}

/** A page of the whole history in job order ({@link OperatorStore.historyScan}). */
export interface HistoryScanParams {
  /** Default 1,000, at most 10,000. */
  readonly limit?: number;
  /** The last entry of the page before: the page holds the entries after it, in (job id, entry id) order. */
  readonly after?: { readonly jobId: string; readonly id: number };
}

/** A page of concurrency or rate limits in key order ({@link OperatorStore.concurrencyLimitList}, {@link OperatorStore.rateLimitList}). */
export interface LimitListParams {
  /** At most this many limits (1 to 1,000). Every limit when absent. */
  readonly limit?: number;
  /** With `limit`: the limits after this one (the last of a full page), in the store's key order. */
  readonly after?: LimitTarget;
}

/** A queue as an operator sees it: whether it is paused, and its stored jobs per state. */
export interface QueueSummary {
  readonly name: string;
  /** Claims skip a paused queue; its jobs keep their places. */
  readonly paused: boolean;
  /** Stored jobs of the queue per state; a state with none is absent. */
  readonly counts: Readonly<Partial<Record<JobState, number>>>;
}

/**
 * One worker node in the registry: a row per worker id, written by the node's beat on its heartbeat
 * cadence ({@link WorkerStore.nodeBeat}), marked stopped by its graceful stop, and deleted by the
 * maintenance sweep once it has not been seen for the retention ({@link MaintenanceStore.nodePrune}).
 * What operators, health checks and metrics read to know which nodes run or ran lately.
 */
export interface NodeRecord {
  /** The node's worker id, the one its leases carry. */
  readonly id: string;
  /** The host name the node runs on. */
  readonly host: string;
  /** The node's process id on that host. */
  readonly pid: number;
  /** The version of nestjs-durable-scheduler the node runs. */
  readonly version: string;
  /** The queues the node claims from. */
  readonly queues: readonly string[];
  /** Handlers the node runs at once, at most. */
  readonly concurrency: number;
  /** Handlers the node was running at its last beat. */
  readonly running: number;
  /**
   * The store's clock at the node's first beat. A beat after the node's stop (a node restarted
   * with the same worker id) starts a new run: `startedAt` is that beat and `stoppedAt` is null again.
   */
  readonly startedAt: Date;
  /** The store's clock at the node's last beat (or its stop). */
  readonly lastSeenAt: Date;
  /** When the node recorded a graceful stop; null while it runs, and for a node that died without one. */
  readonly stoppedAt: Date | null;
  /**
   * The finish mode of the store the node's beats went through ({@link StoreInfo.finish}): whether
   * its outcome writes delete the successes nothing needs. Null for a node of a release before it.
   */
  readonly finish: FinishMode | null;
}

/**
 * Where a job stands, as {@link OperatorStore.jobStatusMany} reads it: enough to tell whether it
 * finished and how, without its payload.
 */
export interface JobStatus {
  readonly id: string;
  readonly queue: string;
  /** The key its concurrency and rate limits are counted under; null for none. */
  readonly concurrencyKey: string | null;
  /** The unique key it holds while unfinished (docs/unique-jobs.md); null for none. */
  readonly uniqueKey: string | null;
  /** The schedule that minted it, and the tick it was minted for: its occurrence (docs/schedules.md). */
  readonly scheduleId: string | null;
  readonly scheduledFor: Date;
  readonly state: JobState;
  /** Attempts charged so far. */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly lastError: string | null;
  /** What the handler stored with `setOutput`; null unless it did. */
  readonly output: unknown;
  /** When the job reached a terminal state; null before. */
  readonly finishedAt: Date | null;
}

/** Receives the queue name of work that may have become due. */
export type WakeListener = (queue: string) => void;

/** An open subscription to wake hints; `close()` stops the listener being called. */
export interface WakeSubscription {
  close(): Promise<void>;
  /**
   * The connection that carries hints (PostgreSQL's LISTEN connection): `connecting` until it is
   * first up, `connected`, or `lost` while it reconnects. Absent for stores whose hints need no
   * connection (memory, SQLite). Polling goes on either way; a health check reads this to tell a
   * node whose wake-ups are gone.
   */
  readonly connection?: 'connecting' | 'connected' | 'lost';
}

/**
 * One attempt's database transaction. The handler's writes through `manager` and the fenced
 * success write commit together, or not at all. Nothing is sent to the database until the handler
 * first uses `manager`, so a handler that never touches it pays nothing.
 */
export interface AttemptTransaction {
  /** An EntityManager bound to this attempt's transaction. */
  readonly manager: EntityManager;
  /** True once the handler used the manager and a transaction is open. */
  readonly opened: boolean;
  /** Runs handler code as this attempt, so the store can tell its queries from other callers'. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Writes the success outcome inside the transaction, fenced like every outcome, then commits; a
   * stale lease rolls everything back instead. Only valid while `opened`.
   */
  commitSuccess(workerId: string, jobId: string, attempt: number, output: unknown): Promise<OutcomeResult>;
  /** Rolls back whatever the handler wrote. Safe to call when nothing was opened. */
  rollback(): Promise<void>;
}

// Params of the role methods. Every method takes at most one params object; the operator
// actions carry the audited `actor` in it (see OperatorOptions).

/** Writes one job. */
export interface EnqueueParams extends EnqueueOptions {
  readonly job: EnqueueInput;
}

/** Writes many jobs in one transaction. */
export interface EnqueueManyParams extends EnqueueOptions {
  readonly jobs: readonly EnqueueInput[];
}

/** Names one job. */
export interface JobRef {
  readonly jobId: string;
}

/** An operator action on one job. */
export interface JobActionParams extends JobRef, OperatorOptions {}

/** An operator cancel ({@link OperatorStore.jobCancel}). */
export interface JobCancelParams extends JobActionParams {
  /**
   * Cancel only a job in one of these states; any other is refused with an
   * {@link IllegalTransitionError} and left as it is. Bulk discards pass
   * `['dead_lettered', 'quarantined']`, so that a dead letter replayed since it was listed is not
   * cancelled instead.
   */
  readonly onlyFrom?: readonly JobState[];
}

/** An operator action on one queue. */
export interface QueueActionParams extends OperatorOptions {
  readonly queue: string;
}

/** A dependant's read of one ancestor's output ({@link WorkerStore.jobParentOutput}). */
export interface ParentOutputParams {
  /** The dependant reading. */
  readonly jobId: string;
  /** The ancestor whose output it reads. */
  readonly ancestorId: string;
}

/** The jobs {@link OperatorStore.jobStatusMany} reads: at most `JOB_STATUS_BATCH` (1,000) ids. */
export interface JobStatusManyParams {
  readonly jobIds: readonly string[];
}

/** Who is told that jobs may have finished in another process ({@link OperatorStore.subscribeFinishHints}). */
export interface FinishHintParams {
  readonly listener: () => void;
}

/** Who is told when work may have become due ({@link WorkerStore.subscribeWakeHints}). */
export interface WakeHintParams {
  readonly listener: WakeListener;
}

/** An operator's change of the cap on a queue or a concurrency key, audited under `actor`. */
export interface ConcurrencyLimitSetParams extends OperatorOptions {
  readonly target: LimitTarget;
  /** The cap on running jobs; null removes the limit. */
  readonly max: number | null;
}

/** An operator's change of the rate limit on a queue or a concurrency key, audited under `actor`. */
export interface RateLimitSetParams extends OperatorOptions {
  readonly target: LimitTarget;
  /** The rate; null removes the limit. */
  readonly rate: Rate | null;
}

/** How many audit entries {@link OperatorStore.auditList} returns, and of which action. */
export interface AuditListParams {
  /** Default 50, at most 1,000. */
  readonly limit?: number;
  /** Only entries of this action (`verify.run`, say); every action when absent. */
  readonly action?: string;
  /** Only entries older than the entry of this id (the last of a page already read), to read the log back a page at a time. */
  readonly before?: number;
}

/** An entry to add to the audit log ({@link OperatorStore.auditAppend}). */
export interface AuditAppendParams extends OperatorOptions {
  /** What was done, as `area.verb` in lower case (`verify.run`). */
  readonly action: string;
  /** What it was done to: a job id, a queue, a range. At most 200 characters. */
  readonly target: string;
  /** Anything more, as a JSON object of at most 64 KiB. No payloads or secrets: the dashboard shows it. */
  readonly detail?: Record<string, unknown>;
}

/** A schedule to create, or whose definition replaces the stored one of that id; audited under `actor`. */
export interface ScheduleUpsertParams extends OperatorOptions {
  readonly schedule: ScheduleInput;
}

/** Names one schedule. */
export interface ScheduleRef {
  readonly scheduleId: string;
}

/** An operator action on one schedule. */
export interface ScheduleActionParams extends ScheduleRef, OperatorOptions {}

/** One minting pass over due schedules ({@link ScheduleStore.scheduleMintDue}). */
export interface MintDueParams {
  /** Mint for at most this many due schedules in one pass. */
  readonly limit: number;
}

/** One pass over dependency edges the outcome writes left unsettled ({@link MaintenanceStore.jobSettleDependencies}). */
export interface SettleDependenciesParams {
  /** Settle at most this many edges in one pass. */
  readonly limit: number;
}

/** A page of the history log after a position ({@link ObserverStore.historyRead}). */
export interface HistoryReadParams {
  /** A position handed out earlier; from the start of the log when absent. */
  readonly after?: string;
  readonly limit: number;
}

/**
 * One history-trim pass: looks at up to `limit` entries of the log written since the last pass and
 * trims the jobs they belong to down to their newest `keep` entries.
 */
export interface HistoryTrimParams {
  /** Entries to keep per job. */
  readonly keep: number;
  /** Entries of the log this pass looks at, at most. */
  readonly limit: number;
}

/** What one history-trim pass did ({@link MaintenanceStore.historyTrim}). */
export interface HistoryTrimResult {
  /** Entries deleted. */
  readonly trimmed: number;
  /**
   * Entries of the log the pass looked at. Fewer than its `limit` means the trim has caught up:
   * with the log, or with the slowest observer, whose unread entries it never touches.
   */
  readonly examined: number;
}

/** A node's request for the lease of a maintenance task ({@link MaintenanceStore.maintenanceLease}). */
export interface MaintenanceLeaseParams {
  /** The task, e.g. `sweep` (the worker's maintenance sweep). At most 64 characters. */
  readonly task: string;
  readonly workerId: string;
  /** How long the lease lasts, from now by the store's clock. */
  readonly leaseMs: number;
}

/** One purge pass: delete at most `limit` succeeded or cancelled jobs finished more than `olderThanMs` ago. */
export interface PurgeParams {
  readonly olderThanMs: number;
  readonly limit: number;
}

/** The cursor of one observer and the worker that would hold its lease. */
export interface ObserverHolderParams {
  readonly observer: string;
  readonly workerId: string;
}

/** A worker's request for an observer's delivery lease, held for `leaseMs`. */
export interface ObserverLeaseParams extends ObserverHolderParams {
  readonly leaseMs: number;
  /**
   * The states the observer hears about, recorded on its cursor by each lease taken, so that a
   * store under the `lean` finish keeps the jobs it would still be fed. Absent: every state.
   */
  readonly to?: readonly JobState[];
  /** The wire names it hears about, recorded with `to`. Absent: every job. */
  readonly jobs?: readonly string[];
}

/** A lease holder moving its observer's cursor past what it delivered. */
export interface ObserverCommitParams extends ObserverHolderParams {
  /** The position of the last delivered entry. */
  readonly position: string;
}

/** A lease holder recording a failed delivery: the cursor stays, and is offered again after `retryDelayMs`. */
export interface ObserverFailParams extends ObserverHolderParams {
  readonly error: string;
  readonly retryDelayMs: number;
}

/**
 * A node's beat ({@link WorkerStore.nodeBeat}): who it is and what it runs now. The store stamps
 * the beat with its own clock.
 */
export interface NodeBeatParams {
  /** The node's worker id. At most 256 characters. */
  readonly id: string;
  /** At most 255 characters. */
  readonly host: string;
  /** A whole number from 0 to 2,147,483,647. */
  readonly pid: number;
  /** At most 64 characters. */
  readonly version: string;
  /** Queue names, 1 to 1,000 of them. */
  readonly queues: readonly string[];
  /** A whole number from 1 to 1,000,000. */
  readonly concurrency: number;
  /** Handlers running now: a whole number from 0 to 1,000,000. */
  readonly running: number;
}

/** Names one node of the registry by its worker id. */
export interface NodeRef {
  readonly id: string;
}

/** Which nodes {@link OperatorStore.nodeList} returns: most recently seen first. */
export interface NodeListParams {
  /** Only nodes seen at or after this instant (by the store's clock). */
  readonly seenSince?: Date;
  /** Default 100, at most 1,000. */
  readonly limit?: number;
}

/** One registry prune pass: delete at most `limit` nodes not seen for more than `olderThanMs`. */
export interface NodePruneParams {
  readonly olderThanMs: number;
  readonly limit: number;
}

// The roles, so that a caller can depend on only the part of the contract it uses (code that only
// enqueues needs a ProducerStore); every adapter implements all of them as JobStore.

/** What every role can read about the store it talks to. */
export interface StoreInfo {
  /** Optional features this adapter offers. */
  readonly capabilities: StoreCapabilities;

  /** The size limits this store enforces. */
  readonly limits: SchedulerLimits;

  /** Which state changes the store appends to job history (`off` records none, and observers get nothing). */
  readonly historyPolicy: HistoryPolicy;

  /**
   * What this store's outcome writes do with a job that succeeds: `keep` it, or (`lean`) delete it
   * in the same write when nothing needs it (docs/stores.md#lean-finish). Per store, not per
   * installation: each node's outcome writes follow its own store's option.
   */
  readonly finish: FinishMode;
}

/** Writes jobs: what an application that only enqueues needs. */
export interface ProducerStore extends StoreInfo {
  /**
   * Writes one job. A job whose id already exists is left alone (`created: false`); so is one whose
   * `uniqueKey` an unfinished job holds, and the result carries the holder's id (`deduplicated`).
   */
  jobEnqueue(params: EnqueueParams): Promise<EnqueueResult>;

  /** Writes many jobs in one transaction: all of them or, on bad input, none. */
  jobEnqueueMany(params: EnqueueManyParams): Promise<EnqueueResult[]>;

  /**
   * Writes a batch in one transaction: its jobs, each marked with a fresh batch id, and its callback
   * jobs, each waiting on every job of the batch through a dependency edge (`onSuccess` in mode
   * `on_success`, `onComplete` in `on_any_terminal`, `onFailure` in `on_failure`). The outcome
   * write that ends the batch's last job releases or cancels the callbacks, in its own transaction,
   * so each runs at most once. Bad input is refused before anything is written.
   */
  jobEnqueueBatch(params: EnqueueBatchParams): Promise<EnqueueBatchResult>;
}

/** Claims, runs and reports jobs: what a worker needs. */
export interface WorkerStore extends StoreInfo {
  /**
   * Leases up to `limit` claimable jobs from `queues` (skipping paused ones) in `runAt`, then enqueue
   * order: due `scheduled` jobs, and `running` jobs whose lease lapsed with attempts left and no
   * cancel request. Each comes back `running` with `attempt + 1` and a lease for `workerId`.
   */
  jobClaim(params: ClaimParams): Promise<JobRecord[]>;

  /**
   * Renews the leases `workerId` still holds and reports the ones it lost. A lease that carries
   * `progress` has it written with the renewal (fenced on worker, attempt and a live lease, like an
   * outcome); a lease neither renewed nor lost wrote nothing, and its progress may be sent again.
   */
  jobHeartbeat(params: HeartbeatParams): Promise<HeartbeatResult>;

  /**
   * The fenced outcome write. Each outcome applies only if `workerId` holds the live lease for that
   * exact attempt; otherwise its result is `stale` and the job is untouched.
   */
  jobCompleteMany(params: CompleteParams): Promise<OutcomeResult[]>;

  /**
   * The fenced outcome write and a claim, as one call: on PostgreSQL one statement, one round trip
   * and one commit while the database has no limit. The outcomes are written first, so their
   * effects (freed slots, released dependants) are there for the claim; if the call throws,
   * neither happened. Optional: a worker given a store without it sends the two calls.
   */
  jobCompleteAndClaim?(params: CompleteAndClaimParams): Promise<CompleteAndClaimResult>;

  /**
   * Hands held leases back at once (graceful shutdown): the job is due again with its attempt
   * already charged, or dead-lettered if that was its last attempt. Fenced like an outcome.
   */
  jobRelinquishMany(params: RelinquishParams): Promise<OutcomeResult[]>;

  /**
   * An ancestor's output, read by a dependant. Absent (`found: false`) when `ancestorId` is not
   * among the job's ancestors, or did not store output.
   */
  jobParentOutput(params: ParentOutputParams): Promise<ParentOutput>;

  /**
   * Starts an attempt transaction (see {@link AttemptTransaction}). Only on stores with the
   * `attemptTransactions` capability; others throw CapabilityNotSupportedError.
   */
  beginAttempt(): AttemptTransaction;

  /**
   * Calls `listener` with a queue name when work there may have become due. What reaches the
   * listener depends on `capabilities.wakeHints`; a store without hints never calls it.
   */
  subscribeWakeHints(params: WakeHintParams): Promise<WakeSubscription>;

  /**
   * Records that the node `id` is alive, by the store's clock: the first beat of an id inserts its
   * row (`startedAt` = `lastSeenAt` = now); later beats update `lastSeenAt`, `running`, `queues`,
   * `concurrency`, `host`, `pid` and `version`, and keep `startedAt`. A beat on a stopped row starts
   * a new run (`startedAt` = now, `stoppedAt` = null). Independent of leases: nothing a beat does,
   * or fails to do, changes a job.
   */
  nodeBeat(params: NodeBeatParams): Promise<void>;

  /**
   * Records a graceful stop of the node `id`: `stoppedAt` and `lastSeenAt` become now and `running`
   * 0. A node that is not registered, or already stopped, is left as it is.
   */
  nodeStop(params: NodeRef): Promise<void>;
}

/** Inspects and steers jobs, queues and limits: what the CLI and an admin screen need. */
export interface OperatorStore extends StoreInfo {
  jobGet(params: JobRef): Promise<JobRecord | null>;

  /**
   * The statuses of the jobs among `jobIds` that exist, in no particular order; an id with no job
   * is left out. One statement by primary key, whatever the number of ids (at most
   * `JOB_STATUS_BATCH`, 1,000): what `waitFor` polls with, so that many waiters cost one read.
   */
  jobStatusMany(params: JobStatusManyParams): Promise<JobStatus[]>;

  /**
   * True while the calling code holds the store's only connection inside an open transaction (on
   * SQLite, whose transactions take turns): no job can change state before that transaction ends,
   * so `waitFor` answers a wait begun there from one read, at once. A status read made there
   * leaves out the jobs that transaction inserted, as another connection would not see them yet.
   * False, or absent, on a store whose transactions run side by side.
   */
  callerHoldsConnection?(): boolean;

  /**
   * One page of jobs, newest first (enqueue order; oldest first with `order: 'oldest'`), with the
   * cursor of the next page. Reads at most 10,000 jobs whatever the table holds: the queue, name,
   * id-prefix and time filters are applied to those, so a rare value gives a short page whose
   * `next` leads on (see {@link JobPage.next}). Paging is stable while work arrives: newest first,
   * jobs enqueued after the first page never appear on later ones; oldest first, they come last.
   */
  jobListPage(params?: ListJobsParams): Promise<JobPage>;

  /** The jobs of {@link OperatorStore.jobListPage}, without the cursor. */
  jobList(params?: ListJobsParams): Promise<JobRecord[]>;

  /** Dead-lettered jobs, most recently dead-lettered first. */
  jobListDeadLettered(params?: ListDeadLetteredParams): Promise<JobRecord[]>;

  /**
   * Sequences whose next job waits behind a job that failed for good, in key order (as the store
   * compares text). A sequence whose failed job has nothing behind it yet, or whose next job runs
   * `afterFailure: 'continue'`, is not blocked.
   */
  jobListBlockedSequences(params?: ListBlockedSequencesParams): Promise<BlockedSequence[]>;

  /**
   * Groups with waiting jobs, in group order (as the store compares text), a page at a time, each
   * with its due and later jobs counted up to {@link GROUP_COUNT_CAP}, how long its oldest due
   * job has waited, and its key's cap. Bounded: a page reads at most its groups' counts' worth of
   * index entries, whatever the backlog.
   */
  jobListGroups(params?: ListGroupsParams): Promise<WaitingGroup[]>;

  /** A batch's counts, failed job ids and callbacks; null when no stored job has the batch id. */
  jobBatch(params: BatchParams): Promise<BatchSummary | null>;

  /** Batches, newest first, one page at a time; each as {@link OperatorStore.jobBatch} reads it with no failed ids. */
  jobListBatches(params?: ListBatchesParams): Promise<BatchSummary[]>;

  /**
   * Cancels every job of a batch that has not ended, its callbacks first, so no callback runs for a
   * batch an operator stopped. Each job is cancelled as {@link OperatorStore.jobCancel} would, with
   * an audit entry of its own; a running one is asked to stop. A batch that has ended changes nothing;
   * a batch id no stored job has is refused with BatchNotFoundError.
   */
  jobCancelBatch(params: BatchCancelParams): Promise<BatchCancelResult>;

  /**
   * A job's dependency edges both ways: its parents (read by the edge table's key) and its
   * dependants (by the edge table's parent index), at most `limit` per side, each with the other
   * job's name, queue and state and whether the edge is settled and satisfied. Null when no job
   * has this id. Reads at most `limit + 1` edges per side, whatever the fan-out.
   */
  jobEdges(params: JobEdgesParams): Promise<JobEdges | null>;

  /**
   * The running jobs that hold slots of a queue's or a concurrency key's limit now (a live lease),
   * soonest lease end first, at most `limit`. Reads the limit's slots (PostgreSQL) or its running
   * jobs (SQLite) through an index, so it costs the jobs running under the limit, never the jobs stored.
   */
  limitHolders(params: LimitHoldersParams): Promise<LimitHolders>;

  /**
   * Per queue, the `runAt` of the oldest due `scheduled` job (paused queues included). One read of
   * the claim index from its oldest entry, stopping after 10,000 due jobs: the answer is exact
   * when fewer are due, and says where it stopped otherwise ({@link QueueOldestDueResult.examinedUntil}).
   */
  queueOldestDue(params?: QueueOldestDueParams): Promise<QueueOldestDueResult>;

  /**
   * Jobs finished per bucket since `since`: succeeded, dead-lettered and cancelled, counted by
   * their `finishedAt`. Read newest first through the finished-jobs indexes (succeeded and
   * cancelled in one, dead-lettered in the other), at most 50,000 rows from each whatever the
   * table holds; past that the older buckets are partial ({@link JobThroughput.partialUntil}).
   * Quarantined jobs are in neither index and are not counted.
   */
  jobThroughput(params: JobThroughputParams): Promise<JobThroughput>;

  /**
   * Operator replay: a `dead_lettered` or `quarantined` job is due again now with attempt 0. If it
   * is the occurrence that stopped its schedule, the schedule mints again.
   */
  jobReplay(params: JobActionParams): Promise<JobRecord>;

  /**
   * Operator cancel: a waiting job is cancelled at once; a running one gets a cancel request that
   * its next heartbeat reports. A dead-lettered or quarantined job is discarded: it ends
   * `cancelled`, keeping its error, and retention deletes it in time. Cancelling a cancelled job
   * changes nothing; a succeeded one is refused.
   */
  jobCancel(params: JobCancelParams): Promise<CancelResult>;

  /**
   * Operator run-now: a `scheduled` job waiting for a later run time or a retry becomes due now,
   * keeping its attempts; a job already due is left as it is. Audited as `job.run_now`. Any other
   * state is refused with an {@link IllegalTransitionError}.
   */
  jobRunNow(params: JobActionParams): Promise<JobRecord>;

  /**
   * A job's state changes, oldest first. With `limit`, only the newest `limit` entries (before the
   * entry `before`), read newest first through the history's (job, id) index, so a page costs its
   * size whatever the job's history holds.
   */
  jobHistory(params: JobHistoryParams): Promise<HistoryEntry[]>;

  /**
   * Every job's history, a page at a time, ordered by job id and then entry id: each job's entries
   * come together, oldest first, so a reader of the whole log keeps one job in hand at a time (the
   * checker of `verifyHistory` reads it so). Read through the history's (job id, id) index.
   */
  historyScan(params?: HistoryScanParams): Promise<HistoryEntry[]>;

  /**
   * Counts per queue and state, and the oldest due job. The counts are exact and kept as jobs
   * change, so reading them costs the number of queues and states, not the number of jobs.
   */
  jobStats(): Promise<JobStats>;

  /**
   * Every queue that has a stored job or has been paused, sorted by name, with its pause state
   * and job counts per state, from the same kept counts as {@link OperatorStore.jobStats}. With
   * `limit`, one page of names after `after`, read in order from the counts' and the queues'
   * keys, so it costs its page whatever the number of queues (a queue whose jobs all went since the
   * counts were last folded can show with no counts); with `queues`, those queues only.
   */
  queueList(params?: QueueListParams): Promise<QueueSummary[]>;

  /**
   * Stored jobs per state over every queue, and how many queues there are, summed from the kept
   * counts in the store: one row per queue and state is read, never the jobs table, and only the
   * totals are returned.
   */
  jobCountTotals(): Promise<JobCountTotals>;

  /**
   * What holds back the cleanup of the jobs table: the oldest open transaction and the dead rows it
   * keeps (see {@link StoreHealth}). Reads the database's activity and statistics views, never the
   * jobs table.
   */
  storeHealth(): Promise<StoreHealth>;

  /** Stops claims from `queue` without losing its jobs' places. */
  queuePause(params: QueueActionParams): Promise<void>;

  queueResume(params: QueueActionParams): Promise<void>;

  /**
   * Sets (or, with null, removes) the cap on running jobs of a queue or a concurrency key. Audited.
   * A cap set to the max it has, or removed where there is none, writes and audits nothing.
   */
  concurrencyLimitSet(params: ConcurrencyLimitSetParams): Promise<void>;

  /** The concurrency limits in key order: every one, or with `limit` a page read in order from the limits' key. */
  concurrencyLimitList(params?: LimitListParams): Promise<ConcurrencyLimit[]>;

  /**
   * Sets (or, with null, removes) the rate limit of a queue or a concurrency key: at most `max`
   * starts in any window of `perMs`, enforced in the claim on the store's clock. Audited. A new
   * limit counts the starts made from then on; a changed one keeps the starts it already counted
   * (lowered, the most recent of them), so no window after the change holds more than its new max.
   * A rate the limit already has, or a removal where there is none, writes and audits nothing.
   */
  rateLimitSet(params: RateLimitSetParams): Promise<void>;

  /** The rate limits in key order: every one, or with `limit` a page read in order from the limits' key. */
  rateLimitList(params?: LimitListParams): Promise<RateLimit[]>;

  /**
   * Calls `listener` soon after jobs finished anywhere (a job became terminal): on PostgreSQL, a
   * NOTIFY the statement that finished them sends on commit, on the wake-up hints' connection. It
   * names no job; a waiter reads the jobs it waits on. Stores whose writers all share this process
   * (memory, SQLite from one process) never call it: the process's own node says when its jobs end.
   */
  subscribeFinishHints(params: FinishHintParams): Promise<WakeSubscription>;

  /** One rate limit's window now, or null when the queue or key has none. */
  rateLimitStatus(params: { readonly target: LimitTarget }): Promise<RateLimitStatus | null>;

  /** The audit log, newest first. */
  auditList(params?: AuditListParams): Promise<AuditRecord[]>;

  /**
   * Adds an entry to the audit log, stamped with the store's clock: for what an operator or the
   * module did outside the store's own actions (a `verify` run records its report so).
   */
  auditAppend(params: AuditAppendParams): Promise<void>;

  /**
   * The node registry, most recently seen first (ties by id, descending): nodes seen since
   * `seenSince` when given, at most `limit` (100 by default, at most 1,000). Read in order from the
   * registry's `lastSeenAt` index, so it costs its page whatever the number of rows.
   */
  nodeList(params?: NodeListParams): Promise<NodeRecord[]>;

  /**
   * The transition observers' cursors, by observer id, at most `limit` (100 by default, at most
   * 1,000): each one's position, live delivery lease, failures, and lag behind the history log.
   * The lag counts the entries {@link ObserverStore.historyRead} would return after the cursor
   * (on PostgreSQL, in (transaction, id) order and only entries of finished transactions), read
   * in order through the log's ordering index and stopped after 10,000 per observer, so a read
   * costs at most that many index entries per observer, whatever the log holds.
   */
  observerList(params?: ObserverListParams): Promise<ObserverStatus[]>;
}

/** Recurring schedules: defined by operators and declarations, minted by workers. */
export interface ScheduleStore extends StoreInfo {
  /** Creates a recurring schedule, or updates its definition if the id exists. */
  scheduleUpsert(params: ScheduleUpsertParams): Promise<ScheduleUpsertResult>;

  scheduleGet(params: ScheduleRef): Promise<Schedule | null>;

  /**
   * Schedules oldest first, a page at a time (50 by default, at most 1,000): the first page, or
   * the schedules created after `after`. A page read in order from an index, so it costs its size
   * whatever the number of schedules.
   */
  scheduleList(params?: ScheduleListParams): Promise<Schedule[]>;

  schedulePause(params: ScheduleActionParams): Promise<Schedule>;

  scheduleResume(params: ScheduleActionParams): Promise<Schedule>;

  /** Mints one occurrence now, outside the pattern. */
  scheduleTrigger(params: ScheduleActionParams): Promise<EnqueueResult>;

  /** Deletes a schedule; its jobs stay. False when there was none. */
  scheduleRemove(params: ScheduleActionParams): Promise<boolean>;

  /** Replays the occurrence that dead-lettered a schedule and lets the schedule mint again. */
  scheduleReplay(params: ScheduleActionParams): Promise<ScheduleReplayResult>;

  /** One minting pass over due schedules (workers run it on a timer). */
  scheduleMintDue(params: MintDueParams): Promise<MintResult>;
}

/** Feeds transition observers from the history log, one leased cursor per observer. */
export interface ObserverStore extends StoreInfo {
  /**
   * The history log after position `after` (from the start when absent), in delivery order: what
   * observers are fed. Only entries whose transactions have finished are returned, so an entry
   * committed late can never land behind a position already handed out.
   */
  historyRead(params: HistoryReadParams): Promise<HistoryEntry[]>;

  /**
   * Takes the delivery lease of an observer's cursor, unless another worker holds it or it is
   * backing off. An observer seen for the first time starts at the end of the log.
   */
  observerLease(params: ObserverLeaseParams): Promise<ObserverLease | null>;

  /** Moves the cursor past delivered entries. Fenced on the lease: false when the lease was lost. */
  observerCommit(params: ObserverCommitParams): Promise<boolean>;

  /** Records a failed delivery; the cursor stays and retries after `retryDelayMs`. Fenced on the lease. */
  observerFail(params: ObserverFailParams): Promise<boolean>;
}

/** Schema, sweeps and clean-up: what the maintenance loop and the CLI's migrate need. */
export interface MaintenanceStore extends StoreInfo {
  /** Creates or upgrades the store's tables. Safe to call from several nodes at once. */
  migrate(): Promise<void>;

  /** The newest migration applied, or null when the store's tables do not exist yet. */
  schemaVersion(): Promise<number | null>;

  /** Releases what the adapter holds itself. The DataSource it was given stays open. */
  close(): Promise<void>;

  /**
   * The maintenance sweep: settles lapsed leases no claim will take, dead-lettering exhausted jobs
   * (`lease expired`) and cancelling cancel-requested ones. Paused queues are swept too.
   */
  jobExpireLeases(params: ExpireLeasesParams): Promise<ExpiredLease[]>;

  /**
   * Settles dependency edges of finished parents that the outcome write did not settle itself (a
   * fan-out beyond its share, a cascade, an edge written while its parent finished). Each edge
   * settles once. Returns how many it settled.
   */
  jobSettleDependencies(params: SettleDependenciesParams): Promise<number>;

  /**
   * Takes the lease of a maintenance task, so that one node runs it per lease instead of every node:
   * true when `workerId` holds it now (it was free, had lapsed, or was already this worker's, which
   * renews it), false while another worker's lease is live.
   */
  maintenanceLease(params: MaintenanceLeaseParams): Promise<boolean>;

  /**
   * Keeps the newest `keep` entries per job, never removing one an observer has not passed yet. Each
   * pass reads only the entries written since the previous pass (the store keeps its place in the
   * log), so its cost follows the work done, not the history retained: a job is trimmed when it
   * gains an entry.
   */
  historyTrim(params: HistoryTrimParams): Promise<HistoryTrimResult>;

  /** Deletes succeeded and cancelled jobs finished more than `olderThanMs` ago, with their history and edges. */
  jobPurge(params: PurgeParams): Promise<number>;

  /**
   * Moves up to `limit` pending changes of the job counts into the counts themselves and returns
   * how many it moved. Counts are exact either way; folding keeps reading them cheap. A store
   * that keeps its counts directly has nothing to fold and returns 0.
   */
  jobCountsFold(params: JobCountsFoldParams): Promise<number>;

  /**
   * Deletes up to `limit` registry rows whose `lastSeenAt` is more than `olderThanMs` ago (stopped
   * or not: a node that died never records its stop), oldest first through the `lastSeenAt`
   * index, and returns how many it deleted.
   */
  nodePrune(params: NodePruneParams): Promise<number>;
}

/**
 * The storage contract: every role at once. Every adapter implements it with the same behaviour,
 * pinned by the conformance suite in `test/conformance`. Methods are named noun first and take at
 * most one params object. Every time comparison uses the store's own clock (the database's
 * `now()`), never the caller's.
 *
 * Bad input is refused with an {@link InvalidArgumentError} before anything is written; so is a
 * params argument that is not an object.
 */
export interface JobStore extends WorkerStore, ProducerStore, OperatorStore, ScheduleStore, ObserverStore, MaintenanceStore {}
