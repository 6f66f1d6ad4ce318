import type { DataSource } from 'typeorm';
import type { HistoryPolicy, JobRecord, SchedulerLimits } from '../../core/index.js';
import type {
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
  SuccessCheck,
} from '../checked/store-driver.js';
import { assertAcyclic } from '../dependencies/dependency-plan.js';
import { PG_POSITION } from '../checked/effect-params.js';
import type { NewJob } from '../enqueue-input.js';
import type { DriverListParams } from '../job-page.js';
import {
  type DriverEdges,
  type DriverEdgesParams,
  type DriverHistoryParams,
  type DriverHolders,
  type DriverHoldersParams,
  type DriverLimitListParams,
  type DriverObserverListParams,
  type DriverObserverStatus,
  type DriverOldestDue,
  type DriverOldestDueParams,
  type DriverQueueListParams,
  type DriverThroughput,
  type DriverThroughputParams,
  throughputWindow,
} from '../operator-reads.js';
import { toJob } from '../job-row.js';
import type {
  AttemptTransaction,
  AuditRecord,
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
  WakeListener,
  WakeSubscription,
} from '../job-store.types.js';
import { toSchedule, type Schedule, type ScheduleTx } from '../schedules/index.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import { type CheckedClaimParams } from '../checked/store-params.js';
import { hasUniqueKeys } from '../unique/unique-plan.js';
import type { PgExecutor, StatementListener } from './pg-executor.js';
import { PgDedicatedClient } from './pg-dedicated-client.js';
import { PgWakeListener } from './pg-wake-listener.js';
import { PostgresAttemptTransaction } from './postgres-attempt-transaction.js';
import { PostgresClaimPath } from './postgres-claim.js';
import { HeldWake } from '../held-wake.js';
import { RateWake } from '../rate-wake.js';
import { ANY_QUEUE, FINISH_HINT } from '../wake-hints.js';
import { PostgresConnections } from './postgres-connections.js';
import { postgresInstall } from './postgres-install.js';
import { migratePostgres } from './postgres-migrator.js';
import type { PostgresNaming } from './postgres-naming.js';
import { PostgresOperatorWrites } from './postgres-operator-writes.js';
import { insertWithParentGuard } from './postgres-parent-guard.js';
import { postgresScheduleTx } from './postgres-schedule-tx.js';
import { postgresStatements, type PostgresStatements } from './postgres-statements.js';
import { enqueueUniquePostgres } from './postgres-unique-enqueue.js';
import { analyzeJobsGuard } from './queries/analyze-jobs.query.js';
import { foldBeforeRead } from './queries/fold-job-counts.query.js';
import { ORDERED_READ_SETTINGS } from './queries/ordered-read.sql.js';

/** The driver's settings, checked and resolved from PostgresJobStoreOptions by PostgresJobStore. */
export interface PostgresDriverSettings {
  /** An initialized DataSource of type `postgres`. */
  readonly dataSource: DataSource;
  readonly naming: PostgresNaming;
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  readonly asyncClaimCommit: boolean;
  readonly onStatement?: StatementListener;
  /** How long closing waits for a statement or heartbeat in flight (tests shorten it). */
  readonly closeWaitMs?: number;
}

/**
 * The PostgreSQL {@link StoreDriver}: every instant from the database's `now()`, claims with
 * `FOR NO KEY UPDATE SKIP LOCKED`, and each hot-path operation one statement whatever the batch
 * size. Wake hints are NOTIFYs the statements send themselves, so they reach listeners on commit.
 */
export class PostgresDriver implements StoreDriver {
  readonly capabilities: StoreCapabilities;
  readonly positions: HistoryPositions = { shape: PG_POSITION, start: '0:0' };
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  readonly connections: PostgresConnections;
  /** The LISTEN connection, opened with the first wake-hint subscriber. */
  readonly wakeListener: PgWakeListener;
  /** The guard's latest check, started by a full claim and not awaited by it (tests await it). */
  statistics: Promise<boolean> = Promise.resolve(false);
  private readonly db: PgExecutor;
  /** Heartbeats get a connection of their own, so busy attempt transactions cannot starve them. */
  private readonly heartbeatDb: PgDedicatedClient;
  private readonly sql: PostgresStatements;
  private readonly analyzeGuard: ReturnType<typeof analyzeJobsGuard>;
  /** Chooses the claim statement, claim by claim. */
  private readonly claims: PostgresClaimPath;
  private readonly operator: PostgresOperatorWrites;
  /** Wakes this process's workers when a rate limit a claim spent frees a start. */
  private readonly rateWake = new RateWake((queue) => this.wakeListener.emit(queue));
  /** Removes the hook that closes this store when the host destroys its DataSource (onPoolEnd). */
  private readonly unhookPoolEnd: () => void;
  /** Wakes them when an outcome may free room for held-back jobs. */
  private readonly heldWake = new HeldWake(() => this.wakeListener.emit(ANY_QUEUE));

  constructor(private readonly settings: PostgresDriverSettings) {
    const { naming, onStatement } = settings;
    this.limits = settings.limits;
    this.historyPolicy = settings.historyPolicy;
    this.connections = new PostgresConnections(settings.dataSource, onStatement, settings.closeWaitMs);
    // Declared here, not as a field: the pool's size is known only once the pool is.
    this.capabilities = Object.freeze({
      transactionalEnqueue: true,
      wakeHints: 'cluster',
      concurrentTransactions: true,
      attemptTransactions: true,
      connectionPool: Object.freeze({ size: this.connections.poolSize }),
    });
    this.db = this.connections.db;
    this.heartbeatDb = new PgDedicatedClient(this.connections.pool, onStatement, settings.closeWaitMs);
    this.wakeListener = new PgWakeListener(this.connections.pool, naming.channel);
    // A host that destroys its DataSource before closing the store: its pool waits for the
    // heartbeat and LISTEN connections, so they go back (as close gives them back) at once.
    this.unhookPoolEnd = this.connections.onPoolEnd(() => void this.close());
    this.sql = postgresStatements(naming, { asyncClaimCommit: settings.asyncClaimCommit });
    this.analyzeGuard = analyzeJobsGuard(naming);
    this.claims = new PostgresClaimPath(
      this.sql,
      (work) => this.connections.transaction(work),
      () => this.connections.transaction((db) => this.sql.provisionPendingLimits(db)),
      { rateWake: (delayMs) => this.rateWake.after(delayMs), claimAgain: () => this.heldWake.again(), held: (seen) => this.heldWake.seen(seen) },
    );
    this.operator = new PostgresOperatorWrites(this.sql, this.connections, naming.channel);
  }

  async migrate(): Promise<void> {
    const { naming } = this.settings;
    await migratePostgres(this.connections.pool, naming, postgresInstall(naming, this.historyPolicy));
  }

  async schemaVersion(): Promise<number | null> {
    return this.sql.schemaVersion(this.db);
  }

  /**
   * Releases the heartbeat and LISTEN connections, waiting at most `closeWaitMs` for a heartbeat in
   * flight. The DataSource stays open; statements still in flight end with it (pg-held-pool.ts).
   */
  async close(): Promise<void> {
    this.unhookPoolEnd();
    this.rateWake.close();
    await Promise.all([this.heartbeatDb.close(), this.wakeListener.close()]);
  }

  async subscribeWakeHints(listener: WakeListener): Promise<WakeSubscription> {
    this.wakeListener.add(listener);
    const wakeListener = this.wakeListener;
    return {
      get connection() {
        if (wakeListener.pid !== undefined) return 'connected' as const;
        return wakeListener.connections === 0 ? ('connecting' as const) : ('lost' as const);
      },
      close: async () => {
        this.wakeListener.remove(listener);
        if (this.wakeListener.size === 0) this.wakeListener.disconnect();
      },
    };
  }

  /**
   * CheckedStore hands the attempt transaction through unwrapped, so its success output is encoded
   * (and its size checked) here, as the outcome write's own check does it.
   */
  beginAttempt({ checkSuccess }: { readonly checkSuccess: SuccessCheck }): AttemptTransaction {
    const { dataSource, onStatement } = this.settings;
    return new PostgresAttemptTransaction(dataSource, this.sql.complete, checkSuccess, onStatement, (results) => this.heldWake.applied(results));
  }

  async jobEnqueueMany({ jobs, manager }: DriverEnqueueParams): Promise<EnqueueResult[]> {
    const db = manager === undefined ? this.db : this.connections.joined(manager);
    if (jobs.length === 0) return [];
    // A batch that declares a rate limit writes it first, in the transaction its jobs commit in, so
    // none of them is visible to a claim without it. Rare, so every other batch keeps its one statement.
    if (jobs.some((job) => job.rateLimit)) {
      const declaring = async (tx: PgExecutor) => {
        await this.sql.declareRateLimits(tx, jobs);
        return this.enqueueIn(tx, jobs);
      };
      return manager === undefined ? this.connections.transaction(declaring) : declaring(db);
    }
    return this.enqueueIn(db, jobs, manager === undefined);
  }

  /** Enqueues in `db`; `own` when `db` is the pool, so a unique-key batch needs a transaction of its own. */
  private async enqueueIn(db: PgExecutor, jobs: readonly NewJob[], own = false): Promise<EnqueueResult[]> {
    if (hasUniqueKeys(jobs)) {
      assertAcyclic(jobs);
      const enqueue = (tx: PgExecutor) => enqueueUniquePostgres(tx, jobs, this.sql.unique, (executor, batch) => this.insertJobs(executor, batch));
      return own ? this.connections.transaction(enqueue) : enqueue(db);
    }
    const created = await this.insertJobs(db, jobs);
    return jobs.map((job) => ({ id: job.id, created: created.has(job.id) }));
  }

  async jobClaim(params: CheckedClaimParams): Promise<JobRecord[]> {
    const rows = await this.claims.claim(this.db, params);
    // A full batch means a backlog: the moment a table without statistics hurts (see the guard).
    if (rows.length === params.limit) this.statistics = this.analyzeGuard.check(this.db);
    return rows.map(toJob);
  }

  async jobHeartbeat({ workerId, leases, leaseMs, withProgress }: DriverHeartbeatParams): Promise<HeartbeatResult> {
    return this.sql.heartbeat(this.heartbeatDb, workerId, leases, leaseMs, withProgress);
  }

  async jobCompleteMany({ workerId, outcomes }: DriverCompleteParams): Promise<OutcomeResult[]> {
    const results = await this.sql.complete(this.db, workerId, outcomes);
    this.heldWake.applied(results);
    return results;
  }

  async jobRelinquishMany({ workerId, leases }: DriverRelinquishParams): Promise<OutcomeResult[]> {
    const results = await this.sql.relinquish(this.db, workerId, leases);
    this.heldWake.applied(results);
    return results;
  }

  async jobExpireLeases({ limit }: { readonly limit: number }): Promise<ExpiredLease[]> {
    return this.sql.expire(this.db, limit);
  }

  async jobParentOutput({ jobId, ancestorId }: DriverParentOutputParams): Promise<ParentOutput> {
    return this.sql.parentOutput(this.db, jobId, ancestorId);
  }

  async jobSettleDependencies({ limit }: { readonly limit: number }): Promise<number> {
    return this.sql.settle(this.db, limit);
  }

  async jobGet({ jobId }: { readonly jobId: string }): Promise<JobRecord | null> {
    const row = await this.sql.get(this.db, jobId);
    return row ? toJob(row) : null;
  }

  async jobStatusMany({ jobIds }: { readonly jobIds: readonly string[] }): Promise<JobStatus[]> {
    return this.sql.statusMany(this.db, jobIds);
  }

  async jobListPage(params: DriverListParams): Promise<JobPage | null> {
    const page = await this.connections.transaction((db) => this.sql.list(db, params));
    return page && { jobs: page.rows.map(toJob), next: page.next };
  }

  async jobListDeadLettered({ limit }: { readonly limit: number }): Promise<JobRecord[]> {
    return (await this.sql.deadLettered(this.db, limit)).map(toJob);
  }

  async jobEdges({ id, limit }: DriverEdgesParams): Promise<DriverEdges | null> {
    return this.sql.jobEdges(this.db, id, limit);
  }

  async limitHolders({ key, limit }: DriverHoldersParams): Promise<DriverHolders> {
    return this.sql.limitHolders(this.db, key, limit);
  }

  async queueOldestDue({ queues, scan }: DriverOldestDueParams): Promise<DriverOldestDue> {
    return this.connections.transaction(async (db) => {
      await db.query(ORDERED_READ_SETTINGS);
      return this.sql.queueOldestDue(db, queues, scan);
    });
  }

  /** The clock and the counts in one transaction, so the window is cut at the `now()` the counts see. */
  async jobThroughput({ since, bucketMs, queue, scan }: DriverThroughputParams): Promise<DriverThroughput> {
    return this.connections.transaction(async (db) => {
      await db.query(ORDERED_READ_SETTINGS);
      const now = await this.sql.throughput.now(db);
      const { from } = throughputWindow(since, bucketMs, now);
      return { ...(await this.sql.throughput.counts(db, from, bucketMs, scan, queue)), now };
    });
  }

  async jobHistory(params: DriverHistoryParams): Promise<HistoryEntry[]> {
    return this.sql.history(this.db, params);
  }

  async jobStats(): Promise<JobStats> {
    await foldBeforeRead(this.sql.foldCounts, this.db);
    return this.sql.jobStats(this.db);
  }

  async queueList(params: DriverQueueListParams): Promise<QueueSummary[]> {
    // Only the whole listing folds first: a page must cost its size, and the fold reads every count.
    if (params.kind === 'all') await foldBeforeRead(this.sql.foldCounts, this.db);
    return this.sql.listQueues(this.db, params);
  }

  async jobCountTotals(): Promise<JobCountTotals> {
    await foldBeforeRead(this.sql.foldCounts, this.db);
    return this.sql.jobCountTotals(this.db);
  }

  async concurrencyLimitList(params: DriverLimitListParams): Promise<ConcurrencyLimit[]> {
    return this.sql.listLimits(this.db, params);
  }

  async subscribeFinishHints(listener: () => void): Promise<WakeSubscription> {
    // On the wake-up hints' connection: a reconnect (ANY_QUEUE) may have dropped finish hints too.
    let open = true;
    const subscription = await this.subscribeWakeHints((payload) => {
      if (payload === FINISH_HINT || payload === ANY_QUEUE) listener();
    });
    // A job that finished before LISTEN took effect sent its hint to nobody: one hint once it has,
    // so the waiter reads after that point and misses nothing in between.
    let cancel = () => {};
    if (this.wakeListener.pid !== undefined) queueMicrotask(() => open && listener());
    else cancel = this.wakeListener.onNextConnection(() => open && listener());
    return {
      get connection() {
        return subscription.connection;
      },
      close: async () => {
        open = false;
        // A subscription closed before the connection came leaves nothing behind waiting for it.
        cancel();
        await subscription.close();
      },
    };
  }

  async rateLimitList(params: DriverLimitListParams): Promise<RateLimit[]> {
    return this.sql.rateLimits.list(this.db, params);
  }

  async rateLimitStatus({ key }: { readonly key: string }): Promise<RateLimitStatus | null> {
    return this.sql.rateLimits.status(this.db, key);
  }

  async auditList({ limit }: { readonly limit: number }): Promise<AuditRecord[]> {
    return this.sql.listAudit(this.db, limit);
  }

  jobReplay<R>(params: DriverJobWriteParams<R>): Promise<R> {
    return this.operator.replay(params);
  }

  jobCancel<R>(params: DriverJobCancelParams<R>): Promise<R> {
    return this.operator.cancel(params);
  }

  jobRunNow<R>(params: DriverJobWriteParams<R>): Promise<R> {
    return this.operator.runNow(params);
  }

  queueSetPaused(params: DriverQueuePausedParams): Promise<void> {
    return this.operator.setPaused(params);
  }

  concurrencyLimitSet(params: DriverLimitSetParams): Promise<void> {
    return this.operator.setLimit(params);
  }

  rateLimitSet(params: DriverRateLimitSetParams): Promise<void> {
    return this.operator.setRateLimit(params);
  }

  scheduleTx<T>(work: (tx: ScheduleTx) => Promise<T>): Promise<T> {
    return this.connections.transaction(async (db) =>
      work(
        await postgresScheduleTx(db, this.sql, {
          insertJobs: (executor, jobs) => this.insertJobs(executor, jobs),
          replayJob: (executor, jobId) => this.operator.replayJob(executor, jobId),
        }),
      ),
    );
  }

  async scheduleGet({ scheduleId }: { readonly scheduleId: string }): Promise<Schedule | null> {
    const row = await this.sql.getSchedule(this.db, scheduleId);
    return row ? toSchedule(row) : null;
  }

  async scheduleList({ limit, after }: { readonly limit: number; readonly after: string | null }): Promise<Schedule[] | null> {
    return (await this.sql.listSchedulesPage(this.db, limit, after))?.map(toSchedule) ?? null;
  }

  async historyRead({ after, limit }: { readonly after: string; readonly limit: number }): Promise<HistoryEntry[]> {
    return this.sql.historyRead(this.db, after, limit);
  }

  async historyTrim({ keep, limit }: { readonly keep: number; readonly limit: number }): Promise<HistoryTrimResult> {
    return this.sql.historyTrim(this.db, keep, limit);
  }

  async maintenanceLease({ task, workerId, leaseMs }: { readonly task: string; readonly workerId: string; readonly leaseMs: number }): Promise<boolean> {
    return this.sql.maintenanceLease(this.db, task, workerId, leaseMs);
  }

  async jobPurge({ olderThanMs, limit }: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
    return this.sql.purge(this.db, olderThanMs, limit);
  }

  async jobCountsFold({ limit }: { readonly limit: number }): Promise<number> {
    return this.sql.foldCounts(this.db, limit);
  }

  async observerLease({ observer, workerId, leaseMs }: DriverObserverLeaseParams): Promise<ObserverLease | null> {
    return this.sql.observerLease(this.db, observer, workerId, leaseMs);
  }

  async observerCommit({ observer, workerId, position }: DriverObserverCommitParams): Promise<boolean> {
    return this.sql.observerCommit(this.db, observer, workerId, position);
  }

  async observerFail(params: DriverObserverFailParams): Promise<boolean> {
    const { observer, workerId, error, retryDelayMs } = params;
    return this.sql.observerFail(this.db, observer, workerId, error, retryDelayMs);
  }

  async observerList({ limit, lagScan }: DriverObserverListParams): Promise<DriverObserverStatus[]> {
    return this.connections.transaction(async (db) => {
      await db.query(ORDERED_READ_SETTINGS);
      return this.sql.listObservers(db, limit, lagScan);
    });
  }

  /**
   * On the pool, not the heartbeat's connection: a beat held up (by a lock, a busy server) must not
   * hold a lease renewal up behind it.
   */
  async nodeBeat(params: DriverNodeBeatParams): Promise<void> {
    await this.sql.nodeBeat(this.db, params);
  }

  async nodeStop({ id }: { readonly id: string }): Promise<void> {
    await this.sql.nodeStop(this.db, id);
  }

  async nodeList({ seenSince, limit }: { readonly seenSince: Date | null; readonly limit: number }): Promise<NodeRecord[]> {
    return this.sql.listNodes(this.db, seenSince, limit);
  }

  async nodePrune({ olderThanMs, limit }: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
    return this.sql.pruneNodes(this.db, olderThanMs, limit);
  }

  /**
   * Decides how each job starts and inserts the batch, refusing unknown parents before any write.
   * Parents outside the batch are locked by the insert itself, so a parent that finishes at the
   * same moment still releases its new dependant at once (see insertWithParentGuard).
   */
  private insertJobs(db: PgExecutor, jobs: readonly NewJob[]): Promise<Set<string>> {
    return insertWithParentGuard(db, jobs, this.sql, this.connections.autocommits(db));
  }
}
