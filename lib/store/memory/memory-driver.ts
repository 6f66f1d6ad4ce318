import {
  CapabilityNotSupportedError,
  type Clock,
  type FinishMode,
  type HistoryPolicy,
  type JobRecord,
  type LifecycleRules,
  type SchedulerLimits,
} from '../../core/index.js';
import type {
  DriverAuditListParams,
  DriverCompleteParams,
  DriverEnqueueParams,
  DriverHeartbeatParams,
  DriverJobCancelParams,
  DriverJobWriteParams,
  DriverLimitSetParams,
  DriverRateLimitSetParams,
  DriverNodeBeatParams,
  DriverObserverCommitParams,
  DriverObserverFailParams,
  DriverObserverLeaseParams,
  DriverParentOutputParams,
  DriverQueuePausedParams,
  DriverRelinquishParams,
  HistoryPositions,
  StoreDriver,
} from '../checked/store-driver.js';
import { SERIAL_POSITION } from '../checked/effect-params.js';
import type {
  AttemptTransaction,
  AuditRecord,
  BatchSummary,
  BlockedSequence,
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
  JobStats,
  JobStatus,
  NodeRecord,
  ObserverLease,
  OutcomeResult,
  ParentOutput,
  QueueSummary,
} from '../job-store.types.js';
import type { DriverListParams } from '../job-page.js';
import type {
  DriverEdges,
  DriverEdgesParams,
  DriverGroup,
  DriverGroupListParams,
  DriverHistoryParams,
  DriverHistoryScanParams,
  DriverHolders,
  DriverHoldersParams,
  DriverLimitListParams,
  DriverObserverListParams,
  DriverObserverStatus,
  DriverOldestDue,
  DriverOldestDueParams,
  DriverQueueListParams,
  DriverThroughput,
  DriverThroughputParams,
} from '../operator-reads.js';
import type { AuditEntry, Schedule, ScheduleTx } from '../schedules/index.js';
import { LATEST_SCHEMA_VERSION } from '../sql-migrations.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import type { CheckedClaimParams } from '../checked/store-params.js';
import { HeldWake } from '../held-wake.js';
import { ANY_QUEUE, WakeHub, type WakeListener, type WakeSubscription } from '../wake-hints.js';
import { MemoryEnqueue } from './memory-enqueue.js';
import { MemoryLeases } from './memory-leases.js';
import { MemoryLifecycle } from './memory-lifecycle.js';
import { MemoryNodes } from './memory-nodes.js';
import { MemoryObservers } from './memory-observers.js';
import { MemoryOperator } from './memory-operator.js';
import { MemoryOperatorReads } from './memory-operator-reads.js';
import { MemoryBatches } from './memory-batches.js';
import { MemoryReads } from './memory-reads.js';
import { MemoryRetention } from './memory-retention.js';
import { memoryScheduleTx } from './memory-schedule-tx.js';
import { MemoryTables, type MemoryState, type MemoryStoreProbe } from './memory-tables.js';

/** The driver's settings, resolved from MemoryJobStoreOptions. */
export interface MemoryDriverSettings {
  readonly clock: Clock;
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  readonly finish: FinishMode;
  readonly probe: MemoryStoreProbe;
  readonly rules: LifecycleRules;
  readonly enforceUniqueKeys: boolean;
}

/**
 * The in-memory store's {@link StoreDriver}: the tables in this process's memory, and one part per
 * role that reads and writes them. Each call runs start to finish with nothing in between, which
 * is the isolation a SQL driver gets from its transaction.
 */
export class MemoryDriver implements StoreDriver {
  readonly capabilities: StoreCapabilities = Object.freeze({
    transactionalEnqueue: false,
    wakeHints: 'process',
    concurrentTransactions: true,
    attemptTransactions: false,
    serialWrites: true,
  });

  readonly positions: HistoryPositions = { shape: SERIAL_POSITION, start: '0' };
  readonly clock: Clock;
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  readonly finish: FinishMode;
  readonly tables = new MemoryTables();
  private readonly hints = new WakeHub();
  /** Wakes this process's claims when an outcome may free room for held-back jobs. */
  private readonly heldWake = new HeldWake(() => this.hints.emit(ANY_QUEUE));
  private readonly life: MemoryLifecycle;
  private readonly enqueue: MemoryEnqueue;
  private readonly leases: MemoryLeases;
  private readonly operator: MemoryOperator;
  private readonly reads: MemoryReads;
  private readonly operatorReads: MemoryOperatorReads;
  private readonly observers: MemoryObservers;
  private readonly retention: MemoryRetention;
  private readonly nodes: MemoryNodes;
  private readonly batches = new MemoryBatches(() => this.tables.jobs.values());

  constructor(settings: MemoryDriverSettings) {
    this.clock = settings.clock;
    this.limits = settings.limits;
    this.historyPolicy = settings.historyPolicy;
    this.finish = settings.finish;
    const state: MemoryState = {
      tables: this.tables,
      clock: this.clock,
      probe: settings.probe,
      rules: settings.rules,
      hints: this.hints,
      historyPolicy: this.historyPolicy,
      finish: this.finish,
    };
    this.life = new MemoryLifecycle(state);
    this.enqueue = new MemoryEnqueue(state, this.life, settings.enforceUniqueKeys);
    this.leases = new MemoryLeases(state, this.life);
    this.operator = new MemoryOperator(state, this.life);
    this.reads = new MemoryReads(state);
    this.operatorReads = new MemoryOperatorReads(state);
    this.observers = new MemoryObservers(state);
    this.retention = new MemoryRetention(state);
    this.nodes = new MemoryNodes(state);
  }

  async migrate(): Promise<void> {}

  /** The in-memory store has no migrations: it is always at the newest version. */
  async schemaVersion(): Promise<number | null> {
    return LATEST_SCHEMA_VERSION;
  }

  async close(): Promise<void> {}

  async subscribeWakeHints(listener: WakeListener): Promise<WakeSubscription> {
    return this.hints.subscribe(listener);
  }

  beginAttempt(): AttemptTransaction {
    throw new CapabilityNotSupportedError(
      'attemptTransactions',
      'The in-memory store has no database transactions; use @Job({ transaction: false }) or the PostgreSQL or SQLite store.',
    );
  }

  async jobEnqueueMany({ jobs, manager }: DriverEnqueueParams): Promise<EnqueueResult[]> {
    if (manager !== undefined) {
      throw new CapabilityNotSupportedError(
        'transactionalEnqueue',
        'The in-memory store cannot join a TypeORM transaction; enqueue without a manager or use the PostgreSQL or SQLite store.',
      );
    }
    return this.enqueue.enqueueMany(jobs);
  }

  async jobClaim(params: CheckedClaimParams): Promise<JobRecord[]> {
    const claimed = this.leases.claim(params);
    this.heldWake.seen(this.leases.heldSeen);
    return claimed;
  }

  async jobHeartbeat(params: DriverHeartbeatParams): Promise<HeartbeatResult> {
    return this.leases.heartbeat(params);
  }

  async jobCompleteMany(params: DriverCompleteParams): Promise<OutcomeResult[]> {
    const results = this.leases.completeMany(params);
    this.heldWake.applied(results);
    return results;
  }

  async jobRelinquishMany(params: DriverRelinquishParams): Promise<OutcomeResult[]> {
    const results = this.leases.relinquishMany(params);
    this.heldWake.applied(results);
    return results;
  }

  async jobExpireLeases(params: { readonly limit: number }): Promise<ExpiredLease[]> {
    return this.leases.expire(params);
  }

  async jobParentOutput(params: DriverParentOutputParams): Promise<ParentOutput> {
    return this.reads.jobParentOutput(params);
  }

  /** Every edge settles the moment its parent finishes here, so there is never anything left over. */
  async jobSettleDependencies(): Promise<number> {
    return 0;
  }

  async jobGet(params: { readonly jobId: string }): Promise<JobRecord | null> {
    return this.reads.jobGet(params);
  }

  async jobStatusMany(params: { readonly jobIds: readonly string[] }): Promise<JobStatus[]> {
    return this.reads.jobStatusMany(params);
  }

  async jobListPage(params: DriverListParams): Promise<JobPage | null> {
    return this.reads.jobListPage(params);
  }

  async jobListDeadLettered(params: { readonly limit: number }): Promise<JobRecord[]> {
    return this.reads.jobListDeadLettered(params);
  }

  async jobListBlockedSequences(params: { readonly limit: number; readonly after: string | null }): Promise<BlockedSequence[]> {
    return this.reads.jobListBlockedSequences(params);
  }
  async jobListGroups(params: DriverGroupListParams): Promise<DriverGroup[]> {
    return this.reads.jobListGroups(params);
  }


  async jobBatch(params: { readonly batchId: string; readonly failedLimit: number }): Promise<BatchSummary | null> {
    return this.batches.jobBatch(params);
  }

  async jobBatchIds(params: { readonly limit: number; readonly before: string | null }): Promise<string[]> {
    return this.batches.jobBatchIds(params);
  }

  async jobBatchOpen(params: { readonly batchId: string; readonly limit: number }): Promise<string[]> {
    return this.batches.jobBatchOpen(params);
  }

  async jobEdges(params: DriverEdgesParams): Promise<DriverEdges | null> {
    return this.operatorReads.jobEdges(params);
  }

  async limitHolders(params: DriverHoldersParams): Promise<DriverHolders> {
    return this.operatorReads.limitHolders(params);
  }

  async queueOldestDue(params: DriverOldestDueParams): Promise<DriverOldestDue> {
    return this.operatorReads.queueOldestDue(params);
  }

  async jobThroughput(params: DriverThroughputParams): Promise<DriverThroughput> {
    return this.operatorReads.jobThroughput(params);
  }

  async jobHistory(params: DriverHistoryParams): Promise<HistoryEntry[]> {
    return this.reads.jobHistory(params);
  }

  async historyScan(params: DriverHistoryScanParams): Promise<HistoryEntry[]> {
    return this.reads.historyScan(params);
  }

  async jobStats(): Promise<JobStats> {
    return this.reads.jobStats();
  }

  async queueList(params: DriverQueueListParams): Promise<QueueSummary[]> {
    return this.reads.queueList(params);
  }

  async jobCountTotals(): Promise<JobCountTotals> {
    return this.reads.jobCountTotals();
  }

  async concurrencyLimitList(params: DriverLimitListParams): Promise<ConcurrencyLimit[]> {
    return this.reads.concurrencyLimitList(params);
  }

  /** Every writer shares this process, whose node reports its own finished jobs: nothing to add. */
  async subscribeFinishHints(): Promise<WakeSubscription> {
    return { close: async () => {} };
  }

  async rateLimitList(params: DriverLimitListParams): Promise<RateLimit[]> {
    return this.reads.rateLimitList(params);
  }

  async rateLimitStatus(params: { readonly key: string }): Promise<RateLimitStatus | null> {
    return this.reads.rateLimitStatus(params);
  }

  async auditList(params: DriverAuditListParams): Promise<AuditRecord[]> {
    return this.reads.auditList(params);
  }

  async auditAppend(entry: AuditEntry): Promise<void> {
    this.operator.audit(entry);
  }

  async jobReplay<R>(params: DriverJobWriteParams<R>): Promise<R> {
    return this.operator.replay(params);
  }

  async jobCancel<R>(params: DriverJobCancelParams<R>): Promise<R> {
    return this.operator.cancel(params);
  }

  async jobRunNow<R>(params: DriverJobWriteParams<R>): Promise<R> {
    return this.operator.runNow(params);
  }

  async queueSetPaused(params: DriverQueuePausedParams): Promise<void> {
    this.operator.setPaused(params);
  }

  async concurrencyLimitSet(params: DriverLimitSetParams): Promise<void> {
    this.operator.setLimit(params);
  }

  async rateLimitSet(params: DriverRateLimitSetParams): Promise<void> {
    this.operator.setRateLimit(params);
  }

  scheduleTx<T>(work: (tx: ScheduleTx) => Promise<T>): Promise<T> {
    const tx = memoryScheduleTx(
      {
        schedules: this.tables.schedules,
        jobState: (id) => this.tables.jobs.get(id)?.state,
        insertJobs: (jobs) => this.enqueue.insertJobs(jobs),
        replayJob: (jobId) => this.life.replayJob(jobId),
        audit: (entry) => this.operator.audit(entry),
      },
      this.clock.now(),
    );
    return work(tx);
  }

  async scheduleGet(params: { readonly scheduleId: string }): Promise<Schedule | null> {
    return this.reads.scheduleGet(params);
  }

  async scheduleList(params: { readonly limit: number; readonly after: string | null }): Promise<Schedule[] | null> {
    return this.reads.scheduleList(params);
  }

  async historyRead(params: { readonly after: string; readonly limit: number }): Promise<HistoryEntry[]> {
    return this.observers.historyRead(params);
  }

  async historyTrim(params: { readonly keep: number; readonly limit: number }): Promise<HistoryTrimResult> {
    return this.retention.historyTrim(params);
  }

  async maintenanceLease(params: { readonly task: string; readonly workerId: string; readonly leaseMs: number }): Promise<boolean> {
    return this.retention.maintenanceLease(params);
  }

  async jobPurge(params: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
    return this.retention.jobPurge(params);
  }

  /** Counts are computed from the rows when read (memory-reads.ts), so nothing is ever pending. */
  async jobCountsFold(): Promise<number> {
    return 0;
  }

  async observerLease(params: DriverObserverLeaseParams): Promise<ObserverLease | null> {
    return this.observers.lease(params);
  }

  async observerCommit(params: DriverObserverCommitParams): Promise<boolean> {
    return this.observers.commit(params);
  }

  async observerFail(params: DriverObserverFailParams): Promise<boolean> {
    return this.observers.fail(params);
  }

  async observerList(params: DriverObserverListParams): Promise<DriverObserverStatus[]> {
    return this.observers.list(params);
  }

  async nodeBeat(params: DriverNodeBeatParams): Promise<void> {
    this.nodes.beat(params);
  }

  async nodeStop(params: { readonly id: string }): Promise<void> {
    this.nodes.stop(params);
  }

  async nodeList(params: { readonly seenSince: Date | null; readonly limit: number }): Promise<NodeRecord[]> {
    return this.nodes.list(params);
  }

  async nodePrune(params: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
    return this.nodes.prune(params);
  }
}
