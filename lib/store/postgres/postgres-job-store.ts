import type { DataSource, EntityManager } from 'typeorm';
import {
  assertDelayMs,
  assertPositiveInteger,
  assertQueueName,
  assertUuid,
  InvalidArgumentError,
  resolveLimits,
  showValue,
  type HistoryPolicy,
  type JobRecord,
  type SchedulerLimits,
} from '../../core/index.js';
import { normalizeEnqueueMany, type EnqueueInput, type NewJob } from '../enqueue-input.js';
import { toJob } from '../job-row.js';
import { cancelResult, replayResult, type OperatorTransition } from '../operator-transition.js';
import { actorOf } from '../operator-options.js';
import {
  type Schedule,
  ScheduleStoreBase,
  type ScheduleTx,
  toSchedule,
} from '../schedules/index.js';
import { postgresScheduleTx } from './postgres-schedule-tx.js';
import type {
  AuditRecord,
  ConcurrencyLimit,
  HistoryEntry,
  LimitTarget,
  ObserverLease,
  ParentOutput,
  JobStats,
  CancelResult,
  OperatorOptions,
  ClaimParams,
  CompleteParams,
  EnqueueOptions,
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
} from '../job-store.js';
import type { AttemptTransaction } from '../attempt-transaction.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import type { WakeListener, WakeSubscription } from '../wake-hints.js';
import {
  checkClaimParams,
  checkCompleteParams,
  checkDeadLetterListParams,
  checkExpireParams,
  checkHeartbeatParams,
  checkListParams,
  checkRelinquishParams,
  MAX_BATCH,
} from '../store-params.js';
import { ManagerExecutor, PoolExecutor, withPooledTransaction, type PgExecutor, type PgPool, type StatementListener } from './pg-executor.js';
import { PgDedicatedClient } from './pg-dedicated-client.js';
import { PgWakeListener } from './pg-wake-listener.js';
import { PostgresAttemptTransaction } from './postgres-attempt-transaction.js';
import { migratePostgres } from './postgres-migrator.js';
import { effectsSql } from './postgres-effects.js';
import { limitFunctionsSql } from './postgres-limits.js';
import {
  assertHistoryPolicy,
  assertLimitMax,
  checkHistoryRead,
  checkObserverCommit,
  checkObserverFail,
  checkObserverLease,
  limitKey,
  PG_POSITION,
} from '../effect-params.js';
import { postgresNaming, type PostgresNaming } from './postgres-naming.js';
import { analyzeJobsGuard } from './queries/analyze-jobs.query.js';
import { PostgresClaimPath } from './postgres-claim.js';
import { postgresStatements, type PostgresStatements } from './postgres-statements.js';
import { assertAcyclic } from '../dependencies/dependency-plan.js';
import { insertWithParentGuard } from './postgres-parent-guard.js';
import type { QueueSummary } from '../queue-summary.js';
import { enqueueUniquePostgres, guardReplayPostgres } from './postgres-unique-enqueue.js';
import { hasUniqueKeys } from '../unique/unique-plan.js';

export interface PostgresJobStoreOptions {
  /** An initialized TypeORM DataSource of type `postgres`. The store uses its pool and never closes it. */
  readonly dataSource: DataSource;
  /** The schema holding the store's tables. Default `durable_scheduler`. */
  readonly schema?: string;
  /** A prefix for the table names inside the schema. Default none. */
  readonly tablePrefix?: string;
  readonly limits?: Partial<SchedulerLimits>;
  /** Called with the text of every statement the store sends (for tests and diagnostics). */
  readonly onStatement?: StatementListener;
  /** What the transition history keeps. Default `transitions_and_errors`; installation-wide (the last migrate sets it). */
  readonly historyPolicy?: HistoryPolicy;
  /**
   * Commit claims without waiting for their WAL flush (`synchronous_commit = off` for the claim's
   * transaction only). Default false. Saves a disk flush per claim (about 0.3 ms on the
   * development machine). If the PostgreSQL server itself crashes within that window, the claim is
   * undone: the job is due again with the same attempt number and runs again, the first run's
   * outcome is refused by the fence, and observers may see that attempt's `running` transition
   * twice. No job is lost and no outcome is recorded twice; outcome writes, enqueues and operator
   * actions always wait for the flush.
   */
  readonly asyncClaimCommit?: boolean;
}

/**
 * The production store, on PostgreSQL. Claims use `FOR NO KEY UPDATE SKIP LOCKED`, every instant comes
 * from the database's `now()`, and each hot-path operation (enqueue, claim, heartbeat, outcome,
 * relinquish, sweep) is a single statement, whatever the batch size.
 */
export class PostgresJobStore extends ScheduleStoreBase implements JobStore {
  readonly capabilities: StoreCapabilities = Object.freeze({
    transactionalEnqueue: true,
    wakeHints: 'cluster',
    concurrentTransactions: true,
    attemptTransactions: true,
  });

  readonly naming: PostgresNaming;
  readonly limits: SchedulerLimits;
  /** Which state changes this store records in job history. */
  readonly historyPolicy: HistoryPolicy;
  /** Whether claims commit without waiting for their WAL flush (see the option). */
  readonly asyncClaimCommit: boolean;
  private readonly pool: PgPool;
  private readonly db: PgExecutor;
  /** Heartbeats get a connection of their own, so busy attempt transactions cannot starve them. */
  private readonly heartbeatDb: PgDedicatedClient;
  /** The LISTEN connection, opened with the first wake-hint subscriber. */
  readonly wakeListener: PgWakeListener;
  private readonly sql: PostgresStatements;
  private readonly analyzeGuard: ReturnType<typeof analyzeJobsGuard>;
  /** Chooses the claim statement, claim by claim. */
  private readonly claims: PostgresClaimPath;
  /** The guard's latest check, started by a full claim and not awaited by it (tests await it). */
  statistics: Promise<boolean> = Promise.resolve(false);

  constructor(private readonly options: PostgresJobStoreOptions) {
    super();
    const { dataSource } = options;
    if (dataSource?.options?.type !== 'postgres') {
      throw new InvalidArgumentError('PostgresJobStore needs a TypeORM DataSource of type "postgres".', 'dataSource');
    }
    if (!dataSource.isInitialized) {
      throw new InvalidArgumentError('PostgresJobStore needs an initialized DataSource; call dataSource.initialize() first.', 'dataSource');
    }
    this.naming = postgresNaming(options.schema, options.tablePrefix);
    this.limits = resolveLimits(options.limits);
    this.historyPolicy = assertHistoryPolicy(options.historyPolicy);
    if (options.asyncClaimCommit !== undefined && typeof options.asyncClaimCommit !== 'boolean') {
      throw new InvalidArgumentError(`asyncClaimCommit must be true or false, got ${showValue(options.asyncClaimCommit)}.`, 'asyncClaimCommit');
    }
    this.asyncClaimCommit = options.asyncClaimCommit === true;
    this.pool = (dataSource.driver as unknown as { master: PgPool }).master;
    this.db = new PoolExecutor(this.pool, options.onStatement);
    this.heartbeatDb = new PgDedicatedClient(this.pool, options.onStatement);
    this.wakeListener = new PgWakeListener(this.pool, this.naming.channel);
    const t = this.naming;
    this.sql = postgresStatements(t, { asyncClaimCommit: this.asyncClaimCommit });
    this.analyzeGuard = analyzeJobsGuard(t);
    this.claims = new PostgresClaimPath(
      this.sql,
      (work) => this.inTransaction(work),
      () => this.inTransaction((db) => this.sql.provisionPendingLimits(db)),
    );
  }

  async migrate(): Promise<void> {
    await migratePostgres(this.pool, this.naming, limitFunctionsSql(this.naming) + effectsSql(this.naming, this.historyPolicy));
  }

  /** The most connections the DataSource's pool opens (node-postgres defaults to 10). */
  get poolSize(): number {
    return (this.pool as unknown as { options?: { max?: number } }).options?.max ?? 10;
  }

  /** Releases the heartbeat and LISTEN connections. The DataSource stays open. */
  async close(): Promise<void> {
    await Promise.all([this.heartbeatDb.close(), this.wakeListener.close()]);
  }

  async subscribeWakeHints(listener: WakeListener): Promise<WakeSubscription> {
    this.wakeListener.add(listener);
    return {
      close: async () => {
        this.wakeListener.remove(listener);
        if (this.wakeListener.size === 0) this.wakeListener.disconnect();
      },
    };
  }

  beginAttempt(): AttemptTransaction {
    return new PostgresAttemptTransaction(this.options.dataSource, this.sql.complete, (workerId, jobId, attempt, output) =>
      checkCompleteParams({ workerId, outcomes: [{ jobId, attempt, kind: 'succeeded', output }] }, this.limits),
      this.options.onStatement,
    );
  }

  async jobEnqueue(input: EnqueueInput, options?: EnqueueOptions): Promise<EnqueueResult> {
    const [result] = await this.jobEnqueueMany([input], options);
    return result!;
  }

  async jobEnqueueMany(inputs: readonly EnqueueInput[], options?: EnqueueOptions): Promise<EnqueueResult[]> {
    const jobs = normalizeEnqueueMany(inputs, this.limits);
    const db = options?.manager === undefined ? this.db : this.transactional(options.manager);
    if (jobs.length === 0) return [];
    if (hasUniqueKeys(jobs)) {
      assertAcyclic(jobs);
      const enqueue = (tx: PgExecutor) => enqueueUniquePostgres(tx, jobs, this.sql.unique, (executor, batch) => this.insertJobs(executor, batch));
      return options?.manager === undefined ? this.inTransaction(enqueue) : enqueue(db);
    }
    const created = await this.insertJobs(db, jobs);
    return jobs.map((job) => ({ id: job.id, created: created.has(job.id) }));
  }

  /**
   * Decides how each job starts and inserts the batch, refusing unknown parents before any write.
   * Parents outside the batch are locked by the insert itself, so a parent that finishes at the
   * same moment still releases its new dependant at once (see insertWithParentGuard).
   */
  private insertJobs(db: PgExecutor, jobs: readonly NewJob[]): Promise<Set<string>> {
    return insertWithParentGuard(db, jobs, this.sql, db === this.db);
  }

  async jobClaim(params: ClaimParams): Promise<JobRecord[]> {
    const checked = checkClaimParams(params);
    const rows = await this.claims.claim(this.db, checked);
    // A full batch means a backlog: the moment a table without statistics hurts (see the guard).
    if (rows.length === checked.limit) this.statistics = this.analyzeGuard.check(this.db);
    return rows.map(toJob);
  }

  async jobHeartbeat(params: HeartbeatParams): Promise<HeartbeatResult> {
    const { workerId, leases, leaseMs } = checkHeartbeatParams(params);
    return this.sql.heartbeat(this.heartbeatDb, workerId, leases, leaseMs);
  }

  async jobCompleteMany(params: CompleteParams): Promise<OutcomeResult[]> {
    const { workerId, outcomes } = checkCompleteParams(params, this.limits);
    return this.sql.complete(this.db, workerId, outcomes);
  }

  async jobRelinquishMany(params: RelinquishParams): Promise<OutcomeResult[]> {
    const { workerId, leases } = checkRelinquishParams(params);
    return this.sql.relinquish(this.db, workerId, leases);
  }

  async jobExpireLeases(params: ExpireLeasesParams): Promise<ExpiredLease[]> {
    return this.sql.expire(this.db, checkExpireParams(params));
  }

  async jobReplay(jobId: string, options?: OperatorOptions): Promise<JobRecord> {
    const id = assertUuid(jobId, 'jobId');
    const actor = actorOf(options);
    return this.inTransaction(async (db) => {
      const job = replayResult(await this.replayJob(db, id));
      await this.sql.insertAudit(db, { actor, action: 'job.replay', target: id });
      return job;
    });
  }

  async jobCancel(jobId: string, options?: OperatorOptions): Promise<CancelResult> {
    const id = assertUuid(jobId, 'jobId');
    const actor = actorOf(options);
    return this.inTransaction(async (db) => {
      const result = cancelResult(await this.sql.operator(db, id, { kind: 'cancel' }, this.naming.channel));
      await this.sql.insertAudit(db, { actor, action: 'job.cancel', target: id, detail: { outcome: result.outcome } });
      return result;
    });
  }

  async jobGet(jobId: string): Promise<JobRecord | null> {
    const row = await this.sql.get(this.db, assertUuid(jobId, 'jobId'));
    return row ? toJob(row) : null;
  }

  async jobList(params?: ListJobsParams): Promise<JobRecord[]> {
    return (await this.sql.list(this.db, checkListParams(params))).map(toJob);
  }

  async jobListDeadLettered(params?: ListDeadLetteredParams): Promise<JobRecord[]> {
    return (await this.sql.deadLettered(this.db, checkDeadLetterListParams(params))).map(toJob);
  }

  async queuePause(queue: string, options?: OperatorOptions): Promise<void> {
    await this.setPaused(queue, true, options);
  }

  async queueResume(queue: string, options?: OperatorOptions): Promise<void> {
    await this.setPaused(queue, false, options);
  }

  async queueList(): Promise<QueueSummary[]> {
    return this.sql.listQueues(this.db);
  }


  async scheduleGet(scheduleId: string): Promise<Schedule | null> {
    const row = await this.sql.getSchedule(this.db, assertUuid(scheduleId, 'scheduleId'));
    return row ? toSchedule(row) : null;
  }

  async scheduleList(): Promise<Schedule[]> {
    return (await this.sql.listSchedules(this.db)).map(toSchedule);
  }







  async jobStats(): Promise<JobStats> {
    return this.sql.jobStats(this.db);
  }

  async schemaVersion(): Promise<number | null> {
    return this.sql.schemaVersion(this.db);
  }

  async jobParentOutput(jobId: string, ancestorId: string): Promise<ParentOutput> {
    return this.sql.parentOutput(this.db, assertUuid(jobId, 'jobId'), assertUuid(ancestorId, 'ancestorId'));
  }

  async jobSettleDependencies(params: { readonly limit: number }): Promise<number> {
    return this.sql.settle(this.db, assertPositiveInteger(params?.limit, 'limit', MAX_BATCH));
  }

  async concurrencyLimitSet(target: LimitTarget, max: number | null, options?: OperatorOptions): Promise<void> {
    const key = limitKey(target);
    const checked = max === null ? null : assertLimitMax(max);
    const actor = actorOf(options);
    await this.inTransaction(async (db) => {
      await this.sql.setLimit(db, key, checked);
      await this.sql.insertAudit(db, { actor, action: 'limit.set', target: key, detail: { max: checked } });
    });
  }

  async concurrencyLimitList(): Promise<ConcurrencyLimit[]> {
    return this.sql.listLimits(this.db);
  }

  async jobHistory(jobId: string): Promise<HistoryEntry[]> {
    return this.sql.history(this.db, assertUuid(jobId, 'jobId'));
  }

  async historyRead(params: { readonly after?: string; readonly limit: number }): Promise<HistoryEntry[]> {
    const { after, limit } = checkHistoryRead(params, PG_POSITION, '0:0');
    return this.sql.historyRead(this.db, after, limit);
  }

  async historyTrim(params: { readonly keep: number; readonly limit: number }): Promise<number> {
    return this.sql.historyTrim(this.db, assertPositiveInteger(params?.keep, 'keep'), assertPositiveInteger(params?.limit, 'limit', 100_000));
  }

  async observerLease(params: { readonly observer: string; readonly workerId: string; readonly leaseMs: number }): Promise<ObserverLease | null> {
    const { observer, workerId, leaseMs } = checkObserverLease(params);
    return this.sql.observerLease(this.db, observer, workerId, leaseMs);
  }

  async observerCommit(params: { readonly observer: string; readonly workerId: string; readonly position: string }): Promise<boolean> {
    const { observer, workerId, position } = checkObserverCommit(params, PG_POSITION);
    return this.sql.observerCommit(this.db, observer, workerId, position);
  }

  async observerFail(params: { readonly observer: string; readonly workerId: string; readonly error: string; readonly retryDelayMs: number }): Promise<boolean> {
    const { observer, workerId, error, retryDelayMs } = checkObserverFail(params, this.limits.maxErrorBytes);
    return this.sql.observerFail(this.db, observer, workerId, error, retryDelayMs);
  }

  async jobPurge(params: { readonly olderThanMs: number; readonly limit: number }): Promise<number> {
    return this.sql.purge(this.db, assertDelayMs(params?.olderThanMs, 'olderThanMs'), assertPositiveInteger(params?.limit, 'limit', 100_000));
  }

  async auditList(params?: { readonly limit?: number }): Promise<AuditRecord[]> {
    const limit = checkDeadLetterListParams(params);
    return this.sql.listAudit(this.db, limit);
  }

  private async setPaused(queue: string, paused: boolean, options: OperatorOptions | undefined): Promise<void> {
    const name = assertQueueName(queue);
    const actor = actorOf(options);
    await this.inTransaction(async (db) => {
      await this.sql.setPaused(db, name, paused);
      await this.sql.insertAudit(db, { actor, action: paused ? 'queue.pause' : 'queue.resume', target: name });
    });
  }

  /** Replays a job inside `db`'s transaction; a schedule it stopped mints again. */
  private async replayJob(db: PgExecutor, jobId: string): Promise<OperatorTransition> {
    await guardReplayPostgres(db, jobId, this.sql.uniqueReplayHolder);
    const outcome = await this.sql.operator(db, jobId, { kind: 'replay' }, this.naming.channel);
    if (outcome.result.ok && outcome.after.scheduleId !== null) {
      await this.sql.reactivateSchedule(db, outcome.after.scheduleId, jobId);
    }
    return outcome;
  }


  protected scheduleTx<T>(work: (tx: ScheduleTx) => Promise<T>): Promise<T> {
    return this.inTransaction(async (db) =>
      work(
        await postgresScheduleTx(db, this.sql, {
          insertJobs: (executor, jobs) => this.insertJobs(executor, jobs),
          replayJob: (executor, jobId) => this.replayJob(executor, jobId),
        }),
      ),
    );
  }

  /** Runs `work` in its own short transaction on one pooled connection. */
  private inTransaction<T>(work: (db: PgExecutor) => Promise<T>): Promise<T> {
    return withPooledTransaction(this.pool, (client) => work(new PoolExecutor(client, this.options.onStatement)));
  }

  private transactional(manager: EntityManager): PgExecutor {
    if (manager?.connection !== this.options.dataSource) {
      throw new InvalidArgumentError('The manager passed to enqueue belongs to another DataSource; use one from the DataSource the scheduler was given.', 'manager');
    }
    if (!manager.queryRunner?.isTransactionActive) {
      throw new InvalidArgumentError(
        'The manager passed to enqueue is not inside an open transaction; use the manager that dataSource.transaction() hands you.',
        'manager',
      );
    }
    return new ManagerExecutor(manager, this.options.onStatement);
  }
}
