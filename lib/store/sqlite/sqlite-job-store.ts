import type { Database } from 'better-sqlite3';
import type { DataSource, EntityManager } from 'typeorm';
import {
  assertDelayMs,
  assertPositiveInteger,
  assertQueueName,
  assertUuid,
  InvalidArgumentError,
  resolveLimits,
  type HistoryPolicy,
  type JobRecord,
  type SchedulerLimits,
} from '../../core/index.js';
import { normalizeEnqueueMany } from '../enqueue-input.js';
import { toJob } from '../job-row.js';
import { cancelResult, replayResult, type OperatorTransition } from '../operator-transition.js';
import { actorOf } from '../operator-options.js';
import {
  type Schedule,
  ScheduleStoreBase,
  type ScheduleTx,
  toSchedule,
} from '../schedules/index.js';
import { sqliteScheduleTx } from './sqlite-schedule-tx.js';
import { sqliteBootStatements, sqliteStatements, type SqliteBootStatements, type SqliteStatements } from './sqlite-statements.js';
import type {
  AuditRecord,
  ConcurrencyLimit,
  HistoryEntry,
  ObserverLease,
  ParentOutput,
  JobStats,
  CancelResult,
  OperatorOptions,
  ClaimParams,
  CompleteParams,
  EnqueueResult,
  ExpiredLease,
  ExpireLeasesParams,
  HeartbeatParams,
  HeartbeatResult,
  JobStore,
  ListDeadLetteredParams,
  ListJobsParams,
  OutcomeResult,
  RelinquishParams,
  AttemptTransaction,
  AuditListParams,
  ConcurrencyLimitSetParams,
  EnqueueManyParams,
  EnqueueParams,
  HistoryReadParams,
  HistoryTrimParams,
  JobActionParams,
  JobRef,
  ObserverCommitParams,
  ObserverFailParams,
  ObserverLeaseParams,
  ParentOutputParams,
  PurgeParams,
  QueueActionParams,
  ScheduleRef,
  SettleDependenciesParams,
  WakeHintParams,
} from '../job-store.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import { ANY_QUEUE, WakeHub, type WakeSubscription } from '../wake-hints.js';
import { SqliteAttemptTransaction } from './sqlite-attempt-transaction.js';
import { effectsSql } from './sqlite-effects.js';
import {
  assertHistoryPolicy,
  assertLimitMax,
  checkHistoryRead,
  checkObserverCommit,
  checkObserverFail,
  checkObserverLease,
  limitKey,
  SERIAL_POSITION,
} from '../effect-params.js';
import {
  checkClaimParams,
  checkCompleteParams,
  checkDeadLetterListParams,
  checkExpireParams,
  checkHeartbeatParams,
  checkListParams,
  checkRelinquishParams,
  MAX_BATCH,
  optionalParamsOf,
  paramsOf,
  type NormalizedOutcome,
} from '../store-params.js';
import type { QueueSummary } from '../queue-summary.js';
import { enqueueResults } from '../unique/unique-plan.js';
import { sqliteGate, type SqliteGate } from './sqlite-gate.js';
import { waitOutBusy } from './sqlite-busy.js';
import { migrateSqlite } from './sqlite-migrator.js';
import { sqliteNaming, type SqliteNaming } from './sqlite-naming.js';

export interface SqliteJobStoreOptions {
  /** An initialized TypeORM DataSource of type `better-sqlite3`. The store shares its connection and never closes it. */
  readonly dataSource: DataSource;
  /** Prefix of the store's table names. Default `durable_scheduler_`. */
  readonly tablePrefix?: string;
  readonly limits?: Partial<SchedulerLimits>;
  /**
   * How long an operation waits for the connection (held by another transaction in this process)
   * or for the database file's write lock (held by another process), without blocking the event
   * loop, before failing with StoreBusyError. It bounds the DataSource's own transactions and
   * attempt transactions too (the first store made on a DataSource sets it). Default 30 s.
   */
  readonly busyTimeoutMs?: number;
  /** What the transition history keeps. Default `transitions_and_errors`; installation-wide (the last migrate sets it). */
  readonly historyPolicy?: HistoryPolicy;
}

/**
 * The embedded store, on a SQLite file through TypeORM's better-sqlite3 driver. It needs no
 * server and suits any number of processes on one host. SQLite has one writer at a time, and
 * TypeORM shares one connection per DataSource, so this adapter runs one transaction at a time per
 * DataSource (see {@link SqliteGate}); across processes the file lock does the same.
 */
export class SqliteJobStore extends ScheduleStoreBase implements JobStore {
  readonly capabilities: StoreCapabilities = Object.freeze({
    transactionalEnqueue: true,
    wakeHints: 'process',
    concurrentTransactions: false,
    attemptTransactions: true,
  });

  readonly naming: SqliteNaming;
  /** Serializes every transaction on the DataSource; attempt transactions run through it too. */
  readonly gate: SqliteGate;
  readonly limits: SchedulerLimits;
  private readonly db: Database;
  private readonly hints = new WakeHub();
  private readonly busyTimeoutMs: number;
  /** Which state changes this store records in job history. */
  readonly historyPolicy: HistoryPolicy;
  private sql?: SqliteStatements;
  /** The clock and the reads that need no prepared statements of the store's. */
  private readonly boot: SqliteBootStatements;

  constructor(private readonly options: SqliteJobStoreOptions) {
    super();
    const { dataSource } = options;
    if (dataSource?.options?.type !== 'better-sqlite3') {
      throw new InvalidArgumentError('SqliteJobStore needs a TypeORM DataSource of type "better-sqlite3".', 'dataSource');
    }
    if (!dataSource.isInitialized) {
      throw new InvalidArgumentError('SqliteJobStore needs an initialized DataSource; call dataSource.initialize() first.', 'dataSource');
    }
    this.busyTimeoutMs = options.busyTimeoutMs ?? 30_000;
    if (!Number.isInteger(this.busyTimeoutMs) || this.busyTimeoutMs < 1) {
      throw new InvalidArgumentError(`busyTimeoutMs must be a whole number of milliseconds of at least 1, got ${String(options.busyTimeoutMs)}.`, 'busyTimeoutMs');
    }
    this.naming = sqliteNaming(options.tablePrefix);
    this.limits = resolveLimits(options.limits);
    this.historyPolicy = assertHistoryPolicy(options.historyPolicy);
    this.db = (dataSource.driver as unknown as { databaseConnection: Database }).databaseConnection;
    this.gate = sqliteGate(dataSource, this.busyTimeoutMs);
    this.boot = sqliteBootStatements(this.db, this.naming);
  }

  async migrate(): Promise<void> {
    await this.gate.exclusive(async () => {
      // Switching to WAL needs the file to itself: another process on it makes this SQLITE_BUSY.
      await this.retryBusy(() => {
        if (!this.db.memory && String(this.db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') {
          this.db.pragma('journal_mode = WAL');
        }
      });
      // The store never waits on this (it backs off without blocking; see retryBusy), but your own
      // statements outside a transaction do: keep a floor so they wait for a neighbour, not fail.
      if (Number(this.db.pragma('busy_timeout', { simple: true })) < 1_000) this.db.pragma('busy_timeout = 5000');
      await this.retryBusy(() => migrateSqlite(this.db, this.naming, effectsSql(this.naming, this.historyPolicy)));
    });
    this.sql = sqliteStatements(this.db, this.naming);
  }

  async close(): Promise<void> {}

  async subscribeWakeHints(params: WakeHintParams): Promise<WakeSubscription> {
    const { listener } = paramsOf('subscribeWakeHints', params, '{ listener }');
    return this.hints.subscribe(listener);
  }

  beginAttempt(): AttemptTransaction {
    return new SqliteAttemptTransaction(this.options.dataSource, this.gate, (workerId, jobId, attempt, output) => {
      const checked = checkCompleteParams({ workerId, outcomes: [{ jobId, attempt, kind: 'succeeded', output }] }, this.limits);
      // Inside the attempt's open transaction: a hint sent before it commits only wakes a claim that waits for the gate.
      return this.db.transaction(() => this.complete(checked.workerId, checked.outcomes, this.now()))()[0]!;
    });
  }

  async jobEnqueue(params: EnqueueParams): Promise<EnqueueResult> {
    const { job: input, ...options } = paramsOf('jobEnqueue', params, '{ job, manager? }');
    const [result] = await this.jobEnqueueMany({ jobs: [input], ...options });
    return result!;
  }

  async jobEnqueueMany(params: EnqueueManyParams): Promise<EnqueueResult[]> {
    const { jobs: inputs, ...options } = paramsOf('jobEnqueueMany', params, '{ jobs, manager? }');
    const jobs = normalizeEnqueueMany(inputs, this.limits);
    const due = new Set<string>();
    const write = (now: number) => {
      const inserted = this.statements().enqueue(jobs, now);
      for (const queue of inserted.due) due.add(queue);
      return enqueueResults(jobs, inserted.created, inserted.plan, inserted.replaced);
    };
    let results: EnqueueResult[];
    if (options?.manager !== undefined) {
      this.checkManager(options.manager);
      // The caller's transaction is open on this very connection, and the caller holds the gate.
      // A hint sent before it commits is harmless: any claim it triggers waits for the gate.
      results = this.db.transaction(() => write(this.now()))();
    } else {
      if (jobs.length === 0) return [];
      results = await this.write(write);
    }
    for (const queue of due) this.hints.emit(queue);
    return results;
  }

  async jobClaim(params: ClaimParams): Promise<JobRecord[]> {
    const checked = checkClaimParams(params);
    return (
      await this.write((now) => {
        const sql = this.statements();
        return sql.limitsExist() ? sql.claimLimited(checked, now) : sql.claimUnlimited(checked, now);
      })
    ).map(toJob);
  }

  async jobHeartbeat(params: HeartbeatParams): Promise<HeartbeatResult> {
    const { workerId, leases, leaseMs } = checkHeartbeatParams(params);
    if (leases.length === 0) return { renewed: [], lost: [] };
    // An attempt waiting for another process's lock is about to hold the connection; queueing
    // behind it would wait for its whole handler, so wait for its BEGIN and renew inside it.
    const opening = this.gate.callerHolds() === null ? this.gate.attemptOpening() : null;
    if (opening) await opening.catch(() => undefined);
    if (this.gate.holderIsOpenAttempt() && this.gate.callerHolds() === null) {
      // An attempt holds the only connection, maybe for longer than a lease. Waiting would let every
      // lease lapse, so renew inside its open transaction; the renewal commits with it.
      return this.db.transaction(() => this.statements().heartbeat(workerId, leases, leaseMs, this.now()))();
    }
    return this.write((now) => this.statements().heartbeat(workerId, leases, leaseMs, now));
  }

  async jobCompleteMany(params: CompleteParams): Promise<OutcomeResult[]> {
    const { workerId, outcomes } = checkCompleteParams(params, this.limits);
    if (outcomes.length === 0) return [];
    return this.write((now) => this.complete(workerId, outcomes, now));
  }

  async jobRelinquishMany(params: RelinquishParams): Promise<OutcomeResult[]> {
    const { workerId, leases } = checkRelinquishParams(params);
    if (leases.length === 0) return [];
    const results = await this.write((now) => this.statements().relinquish(workerId, leases, now));
    if (results.some((r) => r.status === 'applied' && r.state === 'scheduled')) this.hints.emit(ANY_QUEUE);
    return results;
  }

  async jobExpireLeases(params: ExpireLeasesParams): Promise<ExpiredLease[]> {
    const limit = checkExpireParams(params);
    return this.write((now) => {
      const expired = this.statements().expire(limit, now);
      this.hintIfReleasing(expired.map((e) => e.jobId));
      return expired;
    });
  }

  async jobReplay(params: JobActionParams): Promise<JobRecord> {
    const { jobId, ...options } = paramsOf('jobReplay', params, '{ jobId, actor? }');
    const id = assertUuid(jobId, 'jobId');
    const actor = actorOf(options);
    const job = await this.write((now) => {
      const replayed = replayResult(this.replayJob(id, now));
      this.statements().insertAudit({ actor, action: 'job.replay', target: id }, now);
      return replayed;
    });
    this.hints.emit(job.queue);
    return job;
  }

  async jobCancel(params: JobActionParams): Promise<CancelResult> {
    const { jobId, ...options } = paramsOf('jobCancel', params, '{ jobId, actor? }');
    const id = assertUuid(jobId, 'jobId');
    const actor = actorOf(options);
    return this.write((now) => {
      this.hintIfReleasing([id]);
      const result = cancelResult(this.statements().operator(id, { kind: 'cancel' }, now));
      this.statements().insertAudit({ actor, action: 'job.cancel', target: id, detail: { outcome: result.outcome } }, now);
      return result;
    });
  }

  /** Replays a job inside the current write; a schedule it stopped mints again. */
  private replayJob(jobId: string, now: number): OperatorTransition {
    this.statements().uniqueReplayGuard(this.statements().get(jobId));
    const outcome = this.statements().operator(jobId, { kind: 'replay' }, now);
    if (outcome.result.ok && outcome.after.scheduleId !== null) this.statements().reactivateSchedule(outcome.after.scheduleId, jobId, now);
    return outcome;
  }


  async scheduleGet(params: ScheduleRef): Promise<Schedule | null> {
    const { scheduleId } = paramsOf('scheduleGet', params, '{ scheduleId }');
    const id = assertUuid(scheduleId, 'scheduleId');
    const row = await this.read(() => this.statements().getSchedule(id));
    return row ? toSchedule(row) : null;
  }

  async scheduleList(): Promise<Schedule[]> {
    return (await this.read(() => this.statements().listSchedules())).map(toSchedule);
  }







  async jobStats(): Promise<JobStats> {
    return this.read(() => this.boot.jobStats(this.now()));
  }

  async schemaVersion(): Promise<number | null> {
    return this.read(() => this.boot.schemaVersion());
  }

  async auditList(params?: AuditListParams): Promise<AuditRecord[]> {
    optionalParamsOf('auditList', params, '{ limit? }');
    const limit = checkDeadLetterListParams(params);
    return this.read(() => this.statements().listAudit(limit));
  }


  /**
   * Runs a schedule operation as one IMMEDIATE transaction. The operation awaits between its
   * statements, which is safe because the gate keeps the connection for it throughout.
   */
  protected async scheduleTx<T>(work: (tx: ScheduleTx) => Promise<T>): Promise<T> {
    const holder = this.gate.callerHolds();
    if (holder?.kind === 'host') throw this.insideHostTransaction();
    const nested = holder?.kind === 'scheduler' && this.db.inTransaction;
    const run = async () => {
      if (nested) this.db.exec('SAVEPOINT durable_scheduler_schedule');
      else await this.retryBusy(() => this.db.exec('BEGIN IMMEDIATE'));
      const due = new Set<string>();
      try {
        const tx = sqliteScheduleTx(this.statements(), this.now(), {
          insertJobs: (jobs) => {
            const inserted = this.statements().enqueue(jobs, this.now());
            for (const queue of inserted.due) due.add(queue);
            return inserted.created;
          },
          replayJob: (jobId) => {
            const outcome = this.replayJob(jobId, this.now());
            if (outcome.result.ok) due.add(outcome.after.queue);
            return outcome;
          },
        });
        const result = await work(tx);
        this.db.exec(nested ? 'RELEASE durable_scheduler_schedule' : 'COMMIT');
        for (const queue of due) this.hints.emit(queue);
        return result;
      } catch (error) {
        this.db.exec(nested ? 'ROLLBACK TO durable_scheduler_schedule; RELEASE durable_scheduler_schedule' : 'ROLLBACK');
        throw error;
      }
    };
    return holder ? run() : this.gate.exclusive(run);
  }

  async jobParentOutput(params: ParentOutputParams): Promise<ParentOutput> {
    const { jobId, ancestorId } = paramsOf('jobParentOutput', params, '{ jobId, ancestorId }');
    const id = assertUuid(jobId, 'jobId');
    const ancestor = assertUuid(ancestorId, 'ancestorId');
    return this.read(() => this.statements().parentOutput(id, ancestor));
  }

  async jobSettleDependencies(params: SettleDependenciesParams): Promise<number> {
    paramsOf('jobSettleDependencies', params, '{ limit }');
    const limit = assertPositiveInteger(params?.limit, 'limit', MAX_BATCH);
    const settled = await this.write((now) => this.statements().settle(limit, now));
    if (settled > 0) this.hints.emit(ANY_QUEUE);
    return settled;
  }

  async concurrencyLimitSet(params: ConcurrencyLimitSetParams): Promise<void> {
    const { target, max, ...options } = paramsOf('concurrencyLimitSet', params, '{ target, max, actor? }');
    const key = limitKey(target);
    const checked = max === null ? null : assertLimitMax(max);
    const actor = actorOf(options);
    await this.write((now) => {
      this.statements().setLimit(key, checked, now);
      this.statements().insertAudit({ actor, action: 'limit.set', target: key, detail: { max: checked } }, now);
    });
  }

  async concurrencyLimitList(): Promise<ConcurrencyLimit[]> {
    return this.read(() => this.statements().listLimits());
  }

  async jobHistory(params: JobRef): Promise<HistoryEntry[]> {
    const { jobId } = paramsOf('jobHistory', params, '{ jobId }');
    const id = assertUuid(jobId, 'jobId');
    return this.read(() => this.statements().history(id));
  }

  async historyRead(params: HistoryReadParams): Promise<HistoryEntry[]> {
    const { after, limit } = checkHistoryRead(params, SERIAL_POSITION, '0');
    return this.read(() => this.statements().historyRead(Number(after), limit));
  }

  async historyTrim(params: HistoryTrimParams): Promise<number> {
    paramsOf('historyTrim', params, '{ keep, limit }');
    const keep = assertPositiveInteger(params?.keep, 'keep');
    const limit = assertPositiveInteger(params?.limit, 'limit', 100_000);
    return this.write(() => this.statements().historyTrim(keep, limit));
  }

  async observerLease(params: ObserverLeaseParams): Promise<ObserverLease | null> {
    const { observer, workerId, leaseMs } = checkObserverLease(params);
    return this.write((now) => this.statements().observerLease(observer, workerId, leaseMs, now));
  }

  async observerCommit(params: ObserverCommitParams): Promise<boolean> {
    const { observer, workerId, position } = checkObserverCommit(params, SERIAL_POSITION);
    return this.write((now) => this.statements().observerCommit(observer, workerId, Number(position), now));
  }

  async observerFail(params: ObserverFailParams): Promise<boolean> {
    const { observer, workerId, error, retryDelayMs } = checkObserverFail(params, this.limits.maxErrorBytes);
    return this.write((now) => this.statements().observerFail(observer, workerId, error, retryDelayMs, now));
  }

  async jobPurge(params: PurgeParams): Promise<number> {
    paramsOf('jobPurge', params, '{ olderThanMs, limit }');
    const olderThanMs = assertDelayMs(params?.olderThanMs, 'olderThanMs');
    const limit = assertPositiveInteger(params?.limit, 'limit', 100_000);
    return this.write((now) => this.statements().purge(olderThanMs, limit, now));
  }

  /** The fenced outcome write, on every path that writes one (a batch, or an attempt's own transaction). */
  private complete(workerId: string, outcomes: readonly NormalizedOutcome[], now: number): OutcomeResult[] {
    this.hintIfReleasing(outcomes.map((o) => o.jobId));
    return this.statements().complete(workerId, outcomes, now);
  }

  /**
   * Called inside a write, before jobs may finish: if one of them has a dependant waiting, the
   * triggers may release it, and an in-process hint is how a claimer hears of it promptly. The hint
   * is harmless when the write changes nothing: a claim it wakes finds no work, or waits for the gate.
   */
  private hintIfReleasing(jobIds: readonly string[]): void {
    if (this.statements().hasOpenEdges(jobIds)) this.hints.emit(ANY_QUEUE);
  }

  async jobGet(params: JobRef): Promise<JobRecord | null> {
    const { jobId } = paramsOf('jobGet', params, '{ jobId }');
    const id = assertUuid(jobId, 'jobId');
    const row = await this.read(() => this.statements().get(id));
    return row ? toJob(row) : null;
  }

  async jobList(params?: ListJobsParams): Promise<JobRecord[]> {
    const checked = checkListParams(params);
    return (await this.read(() => this.statements().list(checked))).map(toJob);
  }

  async jobListDeadLettered(params?: ListDeadLetteredParams): Promise<JobRecord[]> {
    const limit = checkDeadLetterListParams(params);
    return (await this.read(() => this.statements().deadLettered(limit))).map(toJob);
  }

  async queuePause(params: QueueActionParams): Promise<void> {
    const { queue, ...options } = paramsOf('queuePause', params, '{ queue, actor? }');
    await this.setPaused(queue, true, options);
  }

  async queueResume(params: QueueActionParams): Promise<void> {
    const { queue, ...options } = paramsOf('queueResume', params, '{ queue, actor? }');
    await this.setPaused(queue, false, options);
  }

  async queueList(): Promise<QueueSummary[]> {
    return this.read(() => this.statements().listQueues());
  }

  private async setPaused(queue: string, paused: boolean, options: OperatorOptions | undefined): Promise<void> {
    const name = assertQueueName(queue);
    const actor = actorOf(options);
    await this.write((now) => {
      this.statements().setPaused(name, paused, now);
      this.statements().insertAudit({ actor, action: paused ? 'queue.pause' : 'queue.resume', target: name }, now);
    });
  }

  /** The database's clock, in epoch milliseconds. */
  private now(): number {
    return this.boot.now();
  }

  /**
   * Runs a write as one IMMEDIATE transaction, synchronously, once the connection is free. Inside
   * a scheduler section that already owns the connection (an attempt transaction) it joins that
   * transaction as a savepoint, because on one shared connection there is no other place for it.
   */
  private async write<T>(work: (now: number) => T): Promise<T> {
    const holder = this.gate.callerHolds();
    if (holder?.kind === 'scheduler') return this.db.transaction(() => work(this.now()))();
    if (holder?.kind === 'host') throw this.insideHostTransaction();
    return this.gate.exclusive(() => this.retryBusy(() => this.db.transaction(() => work(this.now())).immediate()));
  }

  /**
   * Reads wait for the connection too, or they could see another owner's uncommitted rows. In WAL
   * mode another process's write lock does not block them; the rare busy read (such as while a
   * crashed process's log is recovered) is waited out like a write.
   */
  private async read<T>(work: () => T): Promise<T> {
    if (this.gate.callerHolds() !== null) return work();
    return this.gate.exclusive(() => waitOutBusy(this.db, work, { timeoutMs: this.busyTimeoutMs }));
  }

  /**
   * A write from code that holds the connection in its own transaction would either join that
   * transaction silently or wait for it forever; refuse it instead.
   */
  private insideHostTransaction(): InvalidArgumentError {
    return new InvalidArgumentError(
      'This SQLite DataSource is inside a transaction opened by the calling code; pass that transaction\'s manager to enqueue, or call the scheduler after the transaction ends.',
      'manager',
    );
  }

  /**
   * Runs `work`, which begins with BEGIN IMMEDIATE, once no other process holds the file's write
   * lock: it backs off without blocking the event loop and tries again, up to `busyTimeoutMs`.
   */
  private async retryBusy<T>(work: () => T): Promise<T> {
    return waitOutBusy(
      this.db,
      () => {
        if (this.db.inTransaction) throw Object.assign(new Error('connection inside a transaction opened outside TypeORM'), { code: 'SQLITE_BUSY' });
        return work();
      },
      { timeoutMs: this.busyTimeoutMs },
    );
  }

  private checkManager(manager: EntityManager): void {
    if (manager?.connection !== this.options.dataSource) {
      throw new InvalidArgumentError('The manager passed to enqueue belongs to another DataSource; use one from the DataSource the scheduler was given.', 'manager');
    }
    if (!manager.queryRunner?.isTransactionActive || !this.gate.heldByCurrent()) {
      throw new InvalidArgumentError(
        'The manager passed to enqueue is not inside an open transaction; use the manager that dataSource.transaction() hands you.',
        'manager',
      );
    }
  }

  private statements(): SqliteStatements {
    if (!this.sql) this.sql = sqliteStatements(this.db, this.naming);
    return this.sql;
  }
}
