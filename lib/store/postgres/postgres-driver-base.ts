import type { DataSource } from 'typeorm';
import type { HistoryPolicy, SchedulerLimits } from '../../core/index.js';
import type { HistoryPositions } from '../checked/store-driver.js';
import { PG_POSITION } from '../checked/effect-params.js';
import type { NewJob } from '../enqueue-input.js';
import type { WakeListener, WakeSubscription } from '../job-store.types.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import type { PgExecutor, StatementListener } from './pg-executor.js';
import { PgDedicatedClient } from './pg-dedicated-client.js';
import { PgWakeListener } from './pg-wake-listener.js';
import { PostgresClaimPath } from './postgres-claim.js';
import { RateWake } from '../rate-wake.js';
import { PostgresConnections } from './postgres-connections.js';
import { effectsSql } from './postgres-effects.js';
import { limitFunctionsSql } from './postgres-limits.js';
import { migratePostgres } from './postgres-migrator.js';
import type { PostgresNaming } from './postgres-naming.js';
import { PostgresOperatorWrites } from './postgres-operator-writes.js';
import { insertWithParentGuard } from './postgres-parent-guard.js';
import { postgresStatements, type PostgresStatements } from './postgres-statements.js';
import { analyzeJobsGuard } from './queries/analyze-jobs.query.js';

/** The driver's settings, checked and resolved from PostgresJobStoreOptions by PostgresJobStore. */
export interface PostgresDriverSettings {
  /** An initialized DataSource of type `postgres`. */
  readonly dataSource: DataSource;
  readonly naming: PostgresNaming;
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  readonly asyncClaimCommit: boolean;
  readonly onStatement?: StatementListener;
}

/**
 * The first layer of `PostgresDriver`: its connections, statements and the parts every role
 * shares. PostgresDriver is one class built in layers, one file per role, so each stays small.
 */
export class PostgresDriverBase {
  readonly capabilities: StoreCapabilities;
  readonly positions: HistoryPositions = { shape: PG_POSITION, start: '0:0' };
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  readonly connections: PostgresConnections;
  /** The LISTEN connection, opened with the first wake-hint subscriber. */
  readonly wakeListener: PgWakeListener;
  /** The guard's latest check, started by a full claim and not awaited by it (tests await it). */
  statistics: Promise<boolean> = Promise.resolve(false);
  protected readonly db: PgExecutor;
  /** Heartbeats get a connection of their own, so busy attempt transactions cannot starve them. */
  protected readonly heartbeatDb: PgDedicatedClient;
  protected readonly sql: PostgresStatements;
  protected readonly analyzeGuard: ReturnType<typeof analyzeJobsGuard>;
  /** Chooses the claim statement, claim by claim. */
  protected readonly claims: PostgresClaimPath;
  protected readonly operator: PostgresOperatorWrites;
  /** Wakes this process's workers when a rate limit a claim spent frees a start. */
  protected readonly rateWake = new RateWake((queue) => this.wakeListener.emit(queue));

  constructor(protected readonly settings: PostgresDriverSettings) {
    const { naming, onStatement } = settings;
    this.limits = settings.limits;
    this.historyPolicy = settings.historyPolicy;
    this.connections = new PostgresConnections(settings.dataSource, onStatement);
    // Declared here, not as a field: the pool's size is known only once the pool is.
    this.capabilities = Object.freeze({
      transactionalEnqueue: true,
      wakeHints: 'cluster',
      concurrentTransactions: true,
      attemptTransactions: true,
      connectionPool: Object.freeze({ size: this.connections.poolSize }),
    });
    this.db = this.connections.db;
    this.heartbeatDb = new PgDedicatedClient(this.connections.pool, onStatement);
    this.wakeListener = new PgWakeListener(this.connections.pool, naming.channel);
    this.sql = postgresStatements(naming, { asyncClaimCommit: settings.asyncClaimCommit });
    this.analyzeGuard = analyzeJobsGuard(naming);
    this.claims = new PostgresClaimPath(
      this.sql,
      (work) => this.connections.transaction(work),
      () => this.connections.transaction((db) => this.sql.provisionPendingLimits(db)),
      (delayMs) => this.rateWake.after(delayMs),
    );
    this.operator = new PostgresOperatorWrites(this.sql, this.connections, naming.channel);
  }

  async migrate(): Promise<void> {
    const { naming } = this.settings;
    await migratePostgres(this.connections.pool, naming, limitFunctionsSql(naming) + effectsSql(naming, this.historyPolicy));
  }

  async schemaVersion(): Promise<number | null> {
    return this.sql.schemaVersion(this.db);
  }

  /** Releases the heartbeat and LISTEN connections. The DataSource stays open. */
  async close(): Promise<void> {
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
   * Decides how each job starts and inserts the batch, refusing unknown parents before any write.
   * Parents outside the batch are locked by the insert itself, so a parent that finishes at the
   * same moment still releases its new dependant at once (see insertWithParentGuard).
   */
  protected insertJobs(db: PgExecutor, jobs: readonly NewJob[]): Promise<Set<string>> {
    return insertWithParentGuard(db, jobs, this.sql, this.connections.autocommits(db));
  }
}
