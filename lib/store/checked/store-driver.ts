import type { EntityManager } from 'typeorm';
import type { FinishMode, HistoryPolicy, JobRecord, JobState, SchedulerLimits } from '../../core/index.js';
import type { NewJob, Rate } from '../enqueue-input.js';
import type {
  AttemptTransaction,
  AuditRecord,
  BatchSummary,
  BlockedSequence,
  CompleteAndClaimResult,
  ConcurrencyLimit,
  RateLimit,
  RateLimitStatus,
  EnqueueResult,
  ExpiredLease,
  HeartbeatResult,
  HistoryEntry,
  JobPage,
  HistoryTrimResult,
  JobCountTotals,
  StoreHealth,
  JobStats,
  JobStatus,
  LeaseRef,
  NodeBeatParams,
  NodeRecord,
  ObserverLease,
  OutcomeResult,
  ParentOutput,
  QueueSummary,
  WakeListener,
  WakeSubscription,
} from '../job-store.types.js';
import type { DriverListParams } from '../job-page.js';
import type {
  DriverEdges,
  DriverEdgesParams,
  DriverHistoryParams,
  DriverHistoryScanParams,
  DriverHolders,
  DriverHoldersParams,
  DriverLimitListParams,
  DriverObserverListParams,
  DriverGroup,
  DriverGroupListParams,
  DriverObserverStatus,
  DriverOldestDue,
  DriverOldestDueParams,
  DriverQueueListParams,
  DriverThroughput,
  DriverThroughputParams,
} from '../operator-reads.js';
import type { OperatorTransition } from './operator-transition.js';
import type { AuditEntry } from '../schedules/schedule-tx.js';
import type { ScheduleTx } from '../schedules/schedule-tx.js';
import type { Schedule } from '../schedules/schedule.types.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import type { CheckedClaimParams, CheckedHeartbeatLease, NormalizedOutcome } from './store-params.js';

/**
 * An operator write on one job, decided and audited inside the driver's transaction: the driver
 * applies the event, hands the transition to `decide` (which throws to roll back, writing nothing),
 * then writes `audit(result)` in the same transaction.
 */
export interface OperatorWrite<R> {
  readonly decide: (transition: OperatorTransition) => R;
  readonly audit: (result: R) => AuditEntry;
}

/** Checks and encodes an attempt's success report, as a fenced outcome write takes it. */
export type SuccessCheck = (
  workerId: string,
  jobId: string,
  attempt: number,
  output: unknown,
) => DriverCompleteParams;

/** How a store spells positions in its history log. */
export interface HistoryPositions {
  /** What a well-formed position looks like. */
  readonly shape: RegExp;
  /** The position before the first entry. */
  readonly start: string;
}

/** Normalized jobs to insert, in `manager`'s transaction when given. */
export type DriverEnqueueParams = { readonly jobs: readonly NewJob[]; readonly manager?: EntityManager };

/**
 * Leases to renew, checked; a lease's `progress` is JSON text to write with its renewal, and
 * `withProgress` is true when any lease carries one.
 */
export type DriverHeartbeatParams = {
  readonly workerId: string;
  readonly leases: readonly CheckedHeartbeatLease[];
  readonly leaseMs: number;
  readonly withProgress: boolean;
};

/** Checked and encoded outcomes of one worker. */
export type DriverCompleteParams = { readonly workerId: string; readonly outcomes: readonly NormalizedOutcome[] };

/** Leases a worker hands back, checked. */
export type DriverRelinquishParams = { readonly workerId: string; readonly leases: readonly LeaseRef[] };

/** A dependant and the ancestor whose output it reads, both checked ids. */
export type DriverParentOutputParams = { readonly jobId: string; readonly ancestorId: string };

/** An operator write on one job: the checked id and how to decide and audit it. */
export type DriverJobWriteParams<R> = { readonly jobId: string; readonly write: OperatorWrite<R> };

/** A cancel: the job, its composed write, and the states it may be cancelled from (all when absent). */
export type DriverJobCancelParams<R> = DriverJobWriteParams<R> & { readonly onlyFrom?: readonly JobState[] };

/** A queue's pause state to set, with its composed audit entry. */
export type DriverQueuePausedParams = { readonly queue: string; readonly paused: boolean; readonly audit: AuditEntry };

/** A limit's storage key and cap (null removes it), with its composed audit entry. */
export type DriverLimitSetParams = { readonly key: string; readonly max: number | null; readonly audit: AuditEntry };

/** A rate limit's storage key and rate (null removes it), with its composed audit entry. */
export type DriverRateLimitSetParams = { readonly key: string; readonly rate: Rate | null; readonly audit: AuditEntry };

/** A node's beat, checked. */
export type DriverNodeBeatParams = NodeBeatParams;

/** The audit entries {@link StoreDriver.auditList} reads: the newest `limit`, of `action` when not null, older than the entry `before` when not null. */
export type DriverAuditListParams = { readonly limit: number; readonly action: string | null; readonly before: number | null };

/** An observer cursor's lease to take, checked, with the filter to record on it (null: everything). */
export type DriverObserverLeaseParams = {
  readonly observer: string;
  readonly workerId: string;
  readonly leaseMs: number;
  readonly to: readonly JobState[] | null;
  readonly jobs: readonly string[] | null;
};

/** A delivered position to commit, checked against the store's position shape. */
export type DriverObserverCommitParams = { readonly observer: string; readonly workerId: string; readonly position: string };

/** A failed delivery to record, with its error already cut to size. */
export type DriverObserverFailParams = { readonly observer: string; readonly workerId: string; readonly error: string; readonly retryDelayMs: number };

/**
 * What an adapter supplies to {@link CheckedStore}: its database and nothing else. Every argument
 * arrives checked and with its defaults filled in, and every audit entry arrives composed, so a
 * driver validates nothing and decides no operator policy; it only reads and writes, each method
 * in one transaction of its own (or the caller's `manager`). Methods mirror the contract's names.
 */
export interface StoreDriver {
  readonly capabilities: StoreCapabilities;
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  /** Under `lean` the driver's outcome writes delete the successes nothing needs; its node beats record the mode. */
  readonly finish: FinishMode;
  readonly positions: HistoryPositions;

  migrate(): Promise<void>;
  schemaVersion(): Promise<number | null>;
  close(): Promise<void>;
  subscribeWakeHints(listener: WakeListener): Promise<WakeSubscription>;
  /** Starts an attempt transaction whose success write runs `checkSuccess` on the handler's output first. */
  beginAttempt(params: { readonly checkSuccess: SuccessCheck }): AttemptTransaction;

  /** Inserts normalized jobs (unique keys and dependency edges included), in `manager`'s transaction when given. */
  jobEnqueueMany(params: DriverEnqueueParams): Promise<EnqueueResult[]>;
  jobClaim(params: CheckedClaimParams): Promise<JobRecord[]>;
  jobHeartbeat(params: DriverHeartbeatParams): Promise<HeartbeatResult>;
  jobCompleteMany(params: DriverCompleteParams): Promise<OutcomeResult[]>;
  /** Outcomes, then a claim, in one round trip where the store can; without it CheckedStore sends the two in turn. */
  jobCompleteAndClaim?(params: DriverCompleteParams & { readonly claim: CheckedClaimParams }): Promise<CompleteAndClaimResult>;
  jobRelinquishMany(params: DriverRelinquishParams): Promise<OutcomeResult[]>;
  jobExpireLeases(params: { readonly limit: number }): Promise<ExpiredLease[]>;
  jobParentOutput(params: DriverParentOutputParams): Promise<ParentOutput>;
  jobSettleDependencies(params: { readonly limit: number }): Promise<number>;

  jobGet(params: { readonly jobId: string }): Promise<JobRecord | null>;
  /** The statuses of the existing jobs among `jobIds` (canonical, distinct, 1 to `JOB_STATUS_BATCH`), in one read. */
  jobStatusMany(params: { readonly jobIds: readonly string[] }): Promise<JobStatus[]>;
  /** See {@link OperatorStore.callerHoldsConnection}; absent on a store whose transactions run side by side. */
  callerHoldsConnection?(): boolean;
  /**
   * One page of jobs in the asked order, cut by `cutPage` (job-page.ts) from at most `LIST_SCAN_LIMIT`
   * jobs examined; null when `cursor` names no stored job.
   */
  jobListPage(params: DriverListParams): Promise<JobPage | null>;
  jobListDeadLettered(params: { readonly limit: number }): Promise<JobRecord[]>;
  /** Up to `limit` blocked sequences with a key after `after` (null: from the first), in key order. */
  jobListBlockedSequences(params: { readonly limit: number; readonly after: string | null }): Promise<BlockedSequence[]>;
  /**
   * Up to `limit` groups with scheduled jobs and a name after `after` (null: from the first), in
   * group order, each count taken up to `countScan` jobs.
   */
  jobListGroups(params: DriverGroupListParams): Promise<DriverGroup[]>;
  /** A batch's counts (callbacks apart), up to `failedLimit` failed ids in id order, and its callbacks; null when no job has the batch id. */
  jobBatch(params: { readonly batchId: string; readonly failedLimit: number }): Promise<BatchSummary | null>;
  /** Up to `limit` distinct batch ids, newest (greatest) first, each less than `before` when given. */
  jobBatchIds(params: { readonly limit: number; readonly before: string | null }): Promise<string[]>;
  /** Up to `limit` ids of the batch's jobs that have not ended: its callbacks first, then its jobs in id order. */
  jobBatchOpen(params: { readonly batchId: string; readonly limit: number }): Promise<string[]>;
  /** The job's edges, up to `limit + 1` per side in the order its indexes give them; null when no job has the id. */
  jobEdges(params: DriverEdgesParams): Promise<DriverEdges | null>;
  /** The limit's cap and up to `limit + 1` holders with a live lease, soonest lease end first (then job id). */
  limitHolders(params: DriverHoldersParams): Promise<DriverHolders>;
  /** The oldest due `runAt` per queue among the first `scan` due jobs in claim order. */
  queueOldestDue(params: DriverOldestDueParams): Promise<DriverOldestDue>;
  /** Finished jobs per bucket of `throughputWindow` (operator-reads.ts), newest first from each finished-jobs index, at most `scan` rows each. */
  jobThroughput(params: DriverThroughputParams): Promise<DriverThroughput>;
  /** Every entry oldest first, or (with a limit) the newest `limit` entries before `before`, oldest first. */
  jobHistory(params: DriverHistoryParams): Promise<HistoryEntry[]>;
  /** Up to `limit` history entries after (`afterJobId`, `afterId`) in (job id, entry id) order; from the first when `afterJobId` is null. */
  historyScan(params: DriverHistoryScanParams): Promise<HistoryEntry[]>;
  jobStats(): Promise<JobStats>;
  /** Every queue sorted by name, a page of names in the store's text order, or the named queues that exist. */
  queueList(params: DriverQueueListParams): Promise<QueueSummary[]>;
  /** Job counts per state over every queue, and the number of queues. */
  jobCountTotals(): Promise<JobCountTotals>;
  /** See {@link OperatorStore.storeHealth}; absent on a store that keeps no old row versions (every field null). */
  storeHealth?(): Promise<StoreHealth>;
  /** Limits in storage-key order: every one, or `limit` of them after the key `after`. */
  concurrencyLimitList(params: DriverLimitListParams): Promise<ConcurrencyLimit[]>;
  rateLimitList(params: DriverLimitListParams): Promise<RateLimit[]>;
  /** Calls `listener` when jobs may have finished in another process; stores that cannot tell return a subscription that never calls it. */
  subscribeFinishHints(listener: () => void): Promise<WakeSubscription>;
  /** One rate limit's window now, under its storage key; null when it has none. */
  rateLimitStatus(params: { readonly key: string }): Promise<RateLimitStatus | null>;
  /** The newest `limit` audit entries, newest first; only `action`'s when it is not null. */
  auditList(params: DriverAuditListParams): Promise<AuditRecord[]>;
  /** Adds one checked entry to the audit log, stamped with the store's clock. */
  auditAppend(entry: AuditEntry): Promise<void>;

  /** Replays a job (a schedule it stopped mints again), decided and audited in one transaction. */
  jobReplay<R>(params: DriverJobWriteParams<R>): Promise<R>;
  /** Cancels a job, or asks its worker to, decided and audited in one transaction. */
  jobCancel<R>(params: DriverJobCancelParams<R>): Promise<R>;
  /** Makes a scheduled job due now, with its audit entry, in one transaction. */
  jobRunNow<R>(params: DriverJobWriteParams<R>): Promise<R>;
  queueSetPaused(params: DriverQueuePausedParams): Promise<void>;
  /**
   * Sets or (with null) removes a limit under its storage key, audited in the same transaction. A
   * max it already has, or a removal where there is none, writes nothing, audit entry included,
   * decided inside the write: nodes that boot together with the same limit write it once.
   */
  concurrencyLimitSet(params: DriverLimitSetParams): Promise<void>;
  /**
   * Sets, changes or (with null) removes a rate limit under its storage key, audited in the same
   * transaction. A new one has `max` unused starts; a raised max adds unused ones; a lowered max
   * keeps the most recent starts; a changed window applies to the starts already counted. A rate it
   * already has, or a removal where there is none, writes nothing, as for concurrencyLimitSet.
   */
  rateLimitSet(params: DriverRateLimitSetParams): Promise<void>;

  /** Runs a schedule operation in one transaction, with the store's clock read at its start. */
  scheduleTx<T>(work: (tx: ScheduleTx) => Promise<T>): Promise<T>;
  scheduleGet(params: { readonly scheduleId: string }): Promise<Schedule | null>;
  /** A page of schedules; null when `after` names no schedule. */
  scheduleList(params: { readonly limit: number; readonly after: string | null }): Promise<Schedule[] | null>;

  /** Entries after `after`, a position of {@link StoreDriver.positions}' shape. */
  historyRead(params: { readonly after: string; readonly limit: number }): Promise<HistoryEntry[]>;
  historyTrim(params: { readonly keep: number; readonly limit: number }): Promise<HistoryTrimResult>;
  maintenanceLease(params: { readonly task: string; readonly workerId: string; readonly leaseMs: number }): Promise<boolean>;
  jobPurge(params: { readonly olderThanMs: number; readonly limit: number }): Promise<number>;
  /** Folds up to `limit` pending count changes; 0 for a store that keeps its counts directly. */
  jobCountsFold(params: { readonly limit: number }): Promise<number>;
  observerLease(params: DriverObserverLeaseParams): Promise<ObserverLease | null>;
  observerCommit(params: DriverObserverCommitParams): Promise<boolean>;
  observerFail(params: DriverObserverFailParams): Promise<boolean>;
  /**
   * Cursors by observer id, at most `limit`, each with its lease judged live by the store's clock
   * and its lag counted up to `lagScan` entries in {@link StoreDriver.historyRead}'s order.
   */
  observerList(params: DriverObserverListParams): Promise<DriverObserverStatus[]>;

  /** Upserts the node's registry row, stamped with the store's clock. */
  nodeBeat(params: DriverNodeBeatParams): Promise<void>;
  /** Marks a registered node that has not stopped yet as stopped now. */
  nodeStop(params: { readonly id: string }): Promise<void>;
  /** Registry rows most recently seen first (ties by id, descending), seen at or after `seenSince` when given. */
  nodeList(params: { readonly seenSince: Date | null; readonly limit: number }): Promise<NodeRecord[]>;
  /** Deletes up to `limit` registry rows last seen more than `olderThanMs` ago, oldest first. */
  nodePrune(params: { readonly olderThanMs: number; readonly limit: number }): Promise<number>;
}
