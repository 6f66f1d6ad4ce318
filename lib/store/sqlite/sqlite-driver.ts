import type { DataSource } from 'typeorm';
import type { Clock, HistoryPolicy, JobRecord, SchedulerLimits } from '../../core/index.js';
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
import { SERIAL_POSITION } from '../checked/effect-params.js';
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
} from '../job-store.types.js';
import { toSchedule, type Schedule, type ScheduleTx } from '../schedules/index.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import { type CheckedClaimParams, type NormalizedOutcome } from '../checked/store-params.js';
import { enqueueResults } from '../unique/unique-plan.js';
import { ANY_QUEUE, type WakeListener, type WakeSubscription } from '../wake-hints.js';
import { SqliteAttemptTransaction } from './sqlite-attempt-transaction.js';
import type { SqliteClaimSignals } from './queries/claim-limited.query.js';
import { SqliteConnection } from './sqlite-connection.js';
import { sqliteInstall } from './sqlite-install.js';
import type { SqliteGate } from './sqlite-gate.js';
import { SqliteHints } from './sqlite-hints.js';
import { HeldWake } from '../held-wake.js';
import { RateWake } from '../rate-wake.js';
import { migrateSqlite } from './sqlite-migrator.js';
import type { SqliteNaming } from './sqlite-naming.js';
import { SqliteOperator } from './sqlite-operator.js';
import { runSqliteScheduleTx } from './sqlite-schedule-tx.js';

/** The driver's settings, resolved and checked from SqliteJobStoreOptions. */
export interface SqliteDriverSettings {
  readonly dataSource: DataSource;
  readonly naming: SqliteNaming;
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  readonly busyTimeoutMs: number;
  readonly clock?: Clock;
}

/**
 * The SQLite store's {@link StoreDriver}. Every write is one IMMEDIATE transaction through the
 * DataSource's gate (see {@link SqliteConnection}), every read waits for the gate too, and hints
 * go to listeners in this process only.
 */
export class SqliteDriver implements StoreDriver {
  readonly capabilities: StoreCapabilities = Object.freeze({
    transactionalEnqueue: true,
    wakeHints: 'process',
    concurrentTransactions: false,
    attemptTransactions: true,
  });

  readonly positions: HistoryPositions = { shape: SERIAL_POSITION, start: '0' };
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  private readonly conn: SqliteConnection;
  private readonly hints: SqliteHints;
  /** Wakes this process's workers when a rate limit a claim spent frees a start. */
  private readonly rateWake = new RateWake((queue) => this.hints.emit(queue));
  /** Wakes them when an outcome may free room for held-back jobs. */
  private readonly heldWake = new HeldWake(() => this.hints.emit(ANY_QUEUE));
  private readonly claimSignals: SqliteClaimSignals = {
    rateWake: (delayMs) => this.rateWake.after(delayMs),
    claimAgain: () => this.heldWake.again(),
    held: (seen) => this.heldWake.seen(seen),
  };
  private readonly operator: SqliteOperator;

  constructor(settings: SqliteDriverSettings) {
    this.limits = settings.limits;
    this.historyPolicy = settings.historyPolicy;
    this.conn = new SqliteConnection(settings.dataSource, settings.naming, settings.busyTimeoutMs, settings.clock);
    this.hints = new SqliteHints(this.conn);
    this.operator = new SqliteOperator(this.conn, this.hints);
  }

  get naming(): SqliteNaming {
    return this.conn.naming;
  }

  get gate(): SqliteGate {
    return this.conn.gate;
  }

  async migrate(): Promise<void> {
    const { db, gate } = this.conn;
    await gate.exclusive(async () => {
      // Switching to WAL needs the file to itself: another process on it makes this SQLITE_BUSY.
      await this.conn.retryBusy(() => {
        if (!db.memory && String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') {
          db.pragma('journal_mode = WAL');
        }
      });
      // The store never waits on this (it backs off without blocking; see retryBusy), but your own
      // statements outside a transaction do: keep a floor so they wait for a neighbour, not fail.
      if (Number(db.pragma('busy_timeout', { simple: true })) < 1_000) db.pragma('busy_timeout = 5000');
      await this.conn.retryBusy(() => migrateSqlite(db, this.naming, sqliteInstall(this.naming, this.historyPolicy)));
    });
    this.conn.prepare();
  }

  async schemaVersion(): Promise<number | null> {
    return this.conn.read(() => this.conn.boot.schemaVersion());
  }

  async close(): Promise<void> {
    this.rateWake.close();
  }

  async subscribeWakeHints(listener: WakeListener): Promise<WakeSubscription> {
    return this.hints.subscribe(listener);
  }

  /**
   * CheckedStore hands the attempt transaction out as it is, so its success write checks its own
   * outcome, with the same check as every outcome write.
   */
  beginAttempt({ checkSuccess }: { readonly checkSuccess: SuccessCheck }): AttemptTransaction {
    return new SqliteAttemptTransaction(this.conn.dataSource, this.gate, (workerId, jobId, attempt, output) => {
      const checked = checkSuccess(workerId, jobId, attempt, output);
      // Inside the attempt's open transaction: a hint sent before it commits only wakes a claim that waits for the gate.
      return this.conn.inOpenTransaction(() => this.complete(checked.workerId, checked.outcomes, this.conn.now()))[0]!;
    });
  }

  async jobEnqueueMany({ jobs, manager }: DriverEnqueueParams): Promise<EnqueueResult[]> {
    const due = new Set<string>();
    const write = (now: number) => {
      const inserted = this.conn.statements().enqueue(jobs, now);
      for (const queue of inserted.due) due.add(queue);
      return enqueueResults(jobs, inserted.created, inserted.plan, inserted.replaced);
    };
    // Written in the caller's open transaction (its manager's, or an attempt's): uncommitted until
    // that ends, so its own status reads leave these jobs out.
    const inCallerTransaction = manager !== undefined || this.conn.gate.callerHolds() !== null;
    let results: EnqueueResult[];
    if (manager !== undefined) {
      this.conn.checkManager(manager);
      // The caller's transaction is open on this very connection, and the caller holds the gate.
      // A hint sent before it commits is harmless: any claim it triggers waits for the gate.
      results = this.conn.inOpenTransaction(() => write(this.conn.now()));
    } else {
      if (jobs.length === 0) return [];
      results = await this.conn.write(write);
    }
    if (inCallerTransaction) this.conn.gate.noteInserted(results.filter((r) => r.created).map((r) => r.id));
    for (const queue of due) this.hints.emit(queue);
    return results;
  }

  async jobClaim(params: CheckedClaimParams): Promise<JobRecord[]> {
    return (
      await this.conn.write((now) => {
        const sql = this.conn.statements();
        if (sql.limitsExist()) return sql.claimLimited(params, now, this.claimSignals);
        this.heldWake.seen(false);
        return sql.claimUnlimited(params, now);
      })
    ).map(toJob);
  }

  async jobHeartbeat({ workerId, leases, leaseMs }: DriverHeartbeatParams): Promise<HeartbeatResult> {
    if (leases.length === 0) return { renewed: [], lost: [] };
    const { gate } = this.conn;
    // An attempt waiting for another process's lock is about to hold the connection; queueing
    // behind it would wait for its whole handler, so wait for its BEGIN and renew inside it.
    const opening = gate.callerHolds() === null ? gate.attemptOpening() : null;
    if (opening) await opening.catch(() => undefined);
    if (gate.holderIsOpenAttempt() && gate.callerHolds() === null) {
      // An attempt holds the only connection, maybe for longer than a lease. Waiting would let every
      // lease lapse, so renew inside its open transaction; the renewal commits with it.
      return this.conn.inOpenTransaction(() => this.conn.statements().heartbeat(workerId, leases, leaseMs, this.conn.now()));
    }
    return this.conn.write((now) => this.conn.statements().heartbeat(workerId, leases, leaseMs, now));
  }

  async jobCompleteMany({ workerId, outcomes }: DriverCompleteParams): Promise<OutcomeResult[]> {
    if (outcomes.length === 0) return [];
    return this.conn.write((now) => this.complete(workerId, outcomes, now));
  }

  async jobRelinquishMany({ workerId, leases }: DriverRelinquishParams): Promise<OutcomeResult[]> {
    if (leases.length === 0) return [];
    const results = await this.conn.write((now) => this.conn.statements().relinquish(workerId, leases, now));
    if (results.some((r) => r.status === 'applied' && r.state === 'scheduled')) this.hints.emit(ANY_QUEUE);
    else this.heldWake.applied(results);
    return results;
  }

  async jobExpireLeases({ limit }: { readonly limit: number }): Promise<ExpiredLease[]> {
    return this.conn.write((now) => {
      const expired = this.conn.statements().expire(limit, now);
      this.hints.ifReleasing(expired.map((e) => e.jobId));
      return expired;
    });
  }

  async jobParentOutput({ jobId, ancestorId }: DriverParentOutputParams): Promise<ParentOutput> {
    return this.conn.read(() => this.conn.statements().parentOutput(jobId, ancestorId));
  }

  async jobSettleDependencies({ limit }: { readonly limit: number }): Promise<number> {
    const settled = await this.conn.write((now) => this.conn.statements().settle(limit, now));
    if (settled > 0) this.hints.emit(ANY_QUEUE);
    return settled;
  }

  async jobGet({ jobId }: { readonly jobId: string }): Promise<JobRecord | null> {
    const row = await this.conn.read(() => this.conn.statements().get(jobId));
    return row ? toJob(row) : null;
  }

  async jobStatusMany({ jobIds }: { readonly jobIds: readonly string[] }): Promise<JobStatus[]> {
    return this.conn.readStatuses(() => this.conn.statements().statusMany(jobIds));
  }

  callerHoldsConnection(): boolean {
    // Scoped owners only (a dataSource.transaction callback, an attempt): plain host code holding
    // it for TypeORM's own short transactions cannot be told from other plain host code.
    return this.conn.gate.callerHolds() !== null;
  }

  async jobListPage(params: DriverListParams): Promise<JobPage | null> {
    const page = await this.conn.read(() => this.conn.statements().list(params));
    return page && { jobs: page.rows.map(toJob), next: page.next };
  }

  async jobListDeadLettered({ limit }: { readonly limit: number }): Promise<JobRecord[]> {
    return (await this.conn.read(() => this.conn.statements().deadLettered(limit))).map(toJob);
  }

  async jobEdges({ id, limit }: DriverEdgesParams): Promise<DriverEdges | null> {
    return this.conn.read(() => this.conn.statements().jobEdges(id, limit));
  }

  async limitHolders({ key, limit }: DriverHoldersParams): Promise<DriverHolders> {
    return this.conn.read(() => this.conn.statements().limitHolders(key, limit, this.conn.now()));
  }

  async queueOldestDue({ queues, scan }: DriverOldestDueParams): Promise<DriverOldestDue> {
    return this.conn.read(() => this.conn.statements().queueOldestDue(queues, scan, this.conn.now()));
  }

  async jobThroughput({ since, bucketMs, queue, scan }: DriverThroughputParams): Promise<DriverThroughput> {
    return this.conn.read(() => {
      const now = this.conn.now();
      const { from } = throughputWindow(since, bucketMs, now);
      return { ...this.conn.statements().throughput(from, bucketMs, scan, queue), now };
    });
  }

  async jobHistory(params: DriverHistoryParams): Promise<HistoryEntry[]> {
    return this.conn.read(() => this.conn.statements().history(params));
  }

  async jobStats(): Promise<JobStats> {
    return this.conn.read(() => this.conn.statements().jobStats(this.conn.now()));
  }

  async queueList(params: DriverQueueListParams): Promise<QueueSummary[]> {
    return this.conn.read(() => this.conn.statements().listQueues(params));
  }

  async jobCountTotals(): Promise<JobCountTotals> {
    return this.conn.read(() => this.conn.statements().jobCountTotals());
  }

  async concurrencyLimitList(params: DriverLimitListParams): Promise<ConcurrencyLimit[]> {
    return this.conn.read(() => this.conn.statements().listLimits(params));
  }

  /**
   * SQLite has no way to signal another process: this process's node reports the jobs it finishes,
   * and a waiter sees other processes' outcomes at its next poll.
   */
  async subscribeFinishHints(): Promise<WakeSubscription> {
    return { close: async () => {} };
  }

  async rateLimitList(params: DriverLimitListParams): Promise<RateLimit[]> {
    return this.conn.read(() => this.conn.statements().rateLimits.list(params));
  }

  async rateLimitStatus({ key }: { readonly key: string }): Promise<RateLimitStatus | null> {
    return this.conn.read(() => this.conn.statements().rateLimits.status(key, this.conn.now()));
  }

  async auditList({ limit }: { readonly limit: number }): Promise<AuditRecord[]> {
    return this.conn.read(() => this.conn.statements().listAudit(limit));
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
    return runSqliteScheduleTx(this.conn, this.hints, this.operator, work);
  }

  async scheduleGet({ scheduleId }: { readonly scheduleId: string }): Promise<Schedule | null> {
    const row = await this.conn.read(() => this.conn.statements().getSchedule(scheduleId));
    return row ? toSchedule(row) : null;
  }

  async scheduleList({ limit, after }: { readonly limit: number; readonly after: string | null }): Promise<Schedule[] | null> {
    return (await this.conn.read(() => this.conn.statements().listSchedulesPage(limit, after)))?.map(toSchedule) ?? null;
  }

  async historyRead({ after, limit }: { readonly after: string; readonly limit: number }): Promise<HistoryEntry[]> {
    return this.conn.read(() => this.conn.statements().historyRead(Number(after), limit));
  }

  async historyTrim({ keep, limit }: { readonly keep: number; readonly limit: number }): Promise<HistoryTrimResult> {
    return this.conn.write((now) => this.conn.statements().historyTrim(keep, limit, now));
  }

  async maintenanceLease({ task, workerId, leaseMs }: { readonly task: string; readonly workerId: string; readonly leaseMs: number }): Promise<boolean> {
    return this.conn.write((now) => this.conn.statements().maintenanceLease(task, workerId, leaseMs, now));
  }

  async jobPurge({ olderThanMs, limit }: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
    return this.conn.write((now) => this.conn.statements().purge(olderThanMs, limit, now));
  }

  /** The counting triggers keep each count directly (one writer at a time): nothing is pending. */
  async jobCountsFold(): Promise<number> {
    return 0;
  }

  async observerLease({ observer, workerId, leaseMs }: DriverObserverLeaseParams): Promise<ObserverLease | null> {
    return this.conn.write((now) => this.conn.statements().observerLease(observer, workerId, leaseMs, now));
  }

  async observerCommit({ observer, workerId, position }: DriverObserverCommitParams): Promise<boolean> {
    return this.conn.write((now) => this.conn.statements().observerCommit(observer, workerId, Number(position), now));
  }

  async observerFail(params: DriverObserverFailParams): Promise<boolean> {
    const { observer, workerId, error, retryDelayMs } = params;
    return this.conn.write((now) => this.conn.statements().observerFail(observer, workerId, error, retryDelayMs, now));
  }

  async observerList({ limit, lagScan }: DriverObserverListParams): Promise<DriverObserverStatus[]> {
    return this.conn.read(() => this.conn.statements().listObservers(limit, lagScan, this.conn.now()));
  }

  /**
   * A write of its own, waiting its turn at the gate like any other; never inside an open attempt
   * transaction as a heartbeat may be, whose rollback would undo it.
   */
  async nodeBeat(params: DriverNodeBeatParams): Promise<void> {
    await this.conn.write((now) => this.conn.statements().nodeBeat(params, now));
  }

  async nodeStop({ id }: { readonly id: string }): Promise<void> {
    await this.conn.write((now) => this.conn.statements().nodeStop(id, now));
  }

  async nodeList({ seenSince, limit }: { readonly seenSince: Date | null; readonly limit: number }): Promise<NodeRecord[]> {
    return this.conn.read(() => this.conn.statements().listNodes(seenSince, limit));
  }

  async nodePrune({ olderThanMs, limit }: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
    return this.conn.write((now) => this.conn.statements().pruneNodes(olderThanMs, limit, now));
  }

  /** The fenced outcome write, on every path that writes one (a batch, or an attempt's own transaction). */
  private complete(workerId: string, outcomes: readonly NormalizedOutcome[], now: number): OutcomeResult[] {
    this.hints.ifReleasing(outcomes.map((o) => o.jobId));
    const results = this.conn.statements().complete(workerId, outcomes, now);
    // Inside the write: a claim the hint wakes waits for the gate, so it reads after the commit.
    this.heldWake.applied(results);
    return results;
  }
}
