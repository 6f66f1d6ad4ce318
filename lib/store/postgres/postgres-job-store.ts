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
import { normalizeEnqueueMany, type NewJob } from '../enqueue-input.js';
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
import type { WakeSubscription } from '../wake-hints.js';
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
  readonly capabilities: StoreCapabilities;

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
    // Declared here, not as a field: the pool's size is known only once the pool is.
    this.capabilities = Object.freeze({
      transactionalEnqueue: true,
      wakeHints: 'cluster',
      concurrentTransactions: true,
      attemptTransactions: true,
      connectionPool: Object.freeze({ size: this.poolSize }),
    });
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

  async subscribeWakeHints(params: WakeHintParams): Promise<WakeSubscription> {
    const { listener } = paramsOf('subscribeWakeHints', params, '{ listener }');
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

  async jobEnqueue(params: EnqueueParams): Promise<EnqueueResult> {
    const { job: input, ...options } = paramsOf('jobEnqueue', params, '{ job, manager? }');
    const [result] = await this.jobEnqueueMany({ jobs: [input], ...options });
    return result!;
  }

  async jobEnqueueMany(params: EnqueueManyParams): Promise<EnqueueResult[]> {
    const { jobs: inputs, ...options } = paramsOf('jobEnqueueMany', params, '{ jobs, manager? }');
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

  async jobReplay(params: JobActionParams): Promise<JobRecord> {
    const { jobId, ...options } = paramsOf('jobReplay', params, '{ jobId, actor? }');
    const id = assertUuid(jobId, 'jobId');
    const actor = actorOf(options);
    return this.inTransaction(async (db) => {
      const job = replayResult(await this.replayJob(db, id));
      await this.sql.insertAudit(db, { actor, action: 'job.replay', target: id });
      return job;
    });
  }

  async jobCancel(params: JobActionParams): Promise<CancelResult> {
    const { jobId, ...options } = paramsOf('jobCancel', params, '{ jobId, actor? }');
    const id = assertUuid(jobId, 'jobId');
    const actor = actorOf(options);
    return this.inTransaction(async (db) => {
      const result = cancelResult(await this.sql.operator(db, id, { kind: 'cancel' }, this.naming.channel));
      await this.sql.insertAudit(db, { actor, action: 'job.cancel', target: id, detail: { outcome: result.outcome } });
      return result;
    });
  }

  async jobGet(params: JobRef): Promise<JobRecord | null> {
    const { jobId } = paramsOf('jobGet', params, '{ jobId }');
    const row = await this.sql.get(this.db, assertUuid(jobId, 'jobId'));
    return row ? toJob(row) : null;
  }

  async jobList(params?: ListJobsParams): Promise<JobRecord[]> {
    return (await this.sql.list(this.db, checkListParams(params))).map(toJob);
  }

  async jobListDeadLettered(params?: ListDeadLetteredParams): Promise<JobRecord[]> {
    return (await this.sql.deadLettered(this.db, checkDeadLetterListParams(params))).map(toJob);
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
    return this.sql.listQueues(this.db);
  }


  async scheduleGet(params: ScheduleRef): Promise<Schedule | null> {
    const { scheduleId } = paramsOf('scheduleGet', params, '{ scheduleId }');
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

  async jobParentOutput(params: ParentOutputParams): Promise<ParentOutput> {
    const { jobId, ancestorId } = paramsOf('jobParentOutput', params, '{ jobId, ancestorId }');
    return this.sql.parentOutput(this.db, assertUuid(jobId, 'jobId'), assertUuid(ancestorId, 'ancestorId'));
  }

  async jobSettleDependencies(params: SettleDependenciesParams): Promise<number> {
    paramsOf('jobSettleDependencies', params, '{ limit }');
    return this.sql.settle(this.db, assertPositiveInteger(params?.limit, 'limit', MAX_BATCH));
  }

  async concurrencyLimitSet(params: ConcurrencyLimitSetParams): Promise<void> {
    const { target, max, ...options } = paramsOf('concurrencyLimitSet', params, '{ target, max, actor? }');
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

  async jobHistory(params: JobRef): Promise<HistoryEntry[]> {
    const { jobId } = paramsOf('jobHistory', params, '{ jobId }');
    return this.sql.history(this.db, assertUuid(jobId, 'jobId'));
  }

  async historyRead(params: HistoryReadParams): Promise<HistoryEntry[]> {
    const { after, limit } = checkHistoryRead(params, PG_POSITION, '0:0');
    return this.sql.historyRead(this.db, after, limit);
  }

  async historyTrim(params: HistoryTrimParams): Promise<number> {
    paramsOf('historyTrim', params, '{ keep, limit }');
    return this.sql.historyTrim(this.db, assertPositiveInteger(params?.keep, 'keep'), assertPositiveInteger(params?.limit, 'limit', 100_000));
  }

  async observerLease(params: ObserverLeaseParams): Promise<ObserverLease | null> {
    const { observer, workerId, leaseMs } = checkObserverLease(params);
    return this.sql.observerLease(this.db, observer, workerId, leaseMs);
  }

  async observerCommit(params: ObserverCommitParams): Promise<boolean> {
    const { observer, workerId, position } = checkObserverCommit(params, PG_POSITION);
    return this.sql.observerCommit(this.db, observer, workerId, position);
  }

  async observerFail(params: ObserverFailParams): Promise<boolean> {
    const { observer, workerId, error, retryDelayMs } = checkObserverFail(params, this.limits.maxErrorBytes);
    return this.sql.observerFail(this.db, observer, workerId, error, retryDelayMs);
  }

  async jobPurge(params: PurgeParams): Promise<number> {
    paramsOf('jobPurge', params, '{ olderThanMs, limit }');
    return this.sql.purge(this.db, assertDelayMs(params?.olderThanMs, 'olderThanMs'), assertPositiveInteger(params?.limit, 'limit', 100_000));
  }

  async auditList(params?: AuditListParams): Promise<AuditRecord[]> {
    optionalParamsOf('auditList', params, '{ limit? }');
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
