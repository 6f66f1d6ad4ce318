import type { DataSource } from 'typeorm';
import type { FinishMode, HistoryPolicy, JobState, SchedulerLimits } from '../../core/index.js';
import type { HistoryPositions } from '../checked/store-driver.js';
import { PG_POSITION } from '../checked/effect-params.js';
import type { NewJob } from '../enqueue-input.js';
import type { WakeListener, WakeSubscription } from '../job-store.types.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import type { PgExecutor, PgPool, StatementListener } from './pg-executor.js';
import { PgDedicatedClient } from './pg-dedicated-client.js';
import { refuseTransactionPooler } from './pg-pooler-check.js';
import { PgWakeListener } from './pg-wake-listener.js';
import { PostgresClaimPath } from './postgres-claim.js';
import { HeldWake } from '../held-wake.js';
import { RateWake } from '../rate-wake.js';
import { ANY_QUEUE } from '../wake-hints.js';
import { PostgresConnections } from './postgres-connections.js';
import { postgresInstall } from './postgres-install.js';
import { migratePostgres } from './postgres-migrator.js';
import type { PostgresNaming } from './postgres-naming.js';
import { PostgresOperatorWrites } from './postgres-operator-writes.js';
import { insertWithParentGuard } from './postgres-parent-guard.js';
import { postgresStatements, type PostgresStatements } from './postgres-statements.js';
import { analyzeJobsGuard } from './queries/analyze-jobs.query.js';
import type { AppliedOutcomes } from './queries/outcome-results.js';

/** The driver's settings, checked and resolved from PostgresJobStoreOptions by PostgresJobStore. */
export interface PostgresDriverSettings {
  /** An initialized DataSource of type `postgres`. */
  readonly dataSource: DataSource;
  readonly naming: PostgresNaming;
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  readonly finish: FinishMode;
  readonly asyncClaimCommit: boolean;
  readonly onStatement?: StatementListener;
  /** How long closing waits for a statement or heartbeat in flight (tests shorten it). */
  readonly closeWaitMs?: number;
  /** Whether the DataSource's connections are sessions (the default) or go through a pooler in transaction mode. */
  readonly poolMode?: 'session' | 'transaction';
  /** Whether statements are prepared once per connection (default true). */
  readonly preparedStatements?: boolean;
  /** Straight to the server, for LISTEN alone, behind a pooler in transaction mode. */
  readonly listenUrl?: string;
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
  readonly finish: FinishMode;
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
  /** Removes the hook that closes this store when the host destroys its DataSource (onPoolEnd). */
  private readonly unhookPoolEnd: () => void;
  /** The pool of one that LISTENs straight to the server (`listenUrl`), which the store opens and ends. */
  private readonly listenPool: (PgPool & { end(): Promise<void> }) | null;
  /** Wakes them when an outcome may free room for held-back jobs. */
  protected readonly heldWake = new HeldWake(() => this.wakeListener.emit(ANY_QUEUE));

  constructor(protected readonly settings: PostgresDriverSettings) {
    const { naming, onStatement } = settings;
    this.limits = settings.limits;
    this.historyPolicy = settings.historyPolicy;
    this.finish = settings.finish;
    this.connections = new PostgresConnections(settings.dataSource, onStatement, settings.closeWaitMs, settings.preparedStatements ?? true);
    // LISTEN needs a session: behind a transaction pooler it goes straight to the server, or nowhere.
    this.listenPool = settings.listenUrl === undefined ? null : openListenPool(settings.dataSource, settings.listenUrl);
    const listenFrom = settings.poolMode === 'transaction' ? this.listenPool : this.connections.pool;
    // Declared here, not as a field: the pool's size is known only once the pool is.
    this.capabilities = Object.freeze({
      transactionalEnqueue: true,
      wakeHints: listenFrom === null ? 'process' : 'cluster',
      concurrentTransactions: true,
      attemptTransactions: true,
      claimsCarryOutcomes: !settings.asyncClaimCommit,
      connectionPool: Object.freeze({ size: this.connections.poolSize }),
    });
    this.db = this.connections.db;
    this.heartbeatDb = new PgDedicatedClient(this.connections.pool, onStatement, settings.closeWaitMs);
    this.wakeListener = new PgWakeListener(listenFrom, naming.channel);
    // A host that destroys its DataSource before closing the store: its pool waits for the
    // heartbeat and LISTEN connections, so they go back (as close gives them back) at once.
    this.unhookPoolEnd = this.connections.onPoolEnd(() => void this.close());
    this.sql = postgresStatements(naming, { asyncClaimCommit: settings.asyncClaimCommit, finish: settings.finish, releasing: listenFrom === null });
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
    if (this.settings.poolMode !== 'transaction') await refuseTransactionPooler(this.connections.pool, this.connections.poolSize);
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
    await this.listenPool?.end().catch(() => undefined);
  }

  /**
   * After an outcome write: held-back jobs may have room now (held-wake.ts). Polling alone, no
   * NOTIFY tells this process's workers of the dependants an applied outcome released, so the
   * write says whether it ended a job they wait on (`releasing`), and a hint from here tells them.
   * One hint covers both.
   */
  protected outcomesApplied({ results, releasing }: AppliedOutcomes): void {
    if (releasing) this.wakeListener.emit(ANY_QUEUE);
    else this.heldWake.applied(results);
  }

  async subscribeWakeHints(listener: WakeListener): Promise<WakeSubscription> {
    this.wakeListener.add(listener);
    const wakeListener = this.wakeListener;
    // Polling alone: no connection carries hints, so there is none to report on.
    if (!wakeListener.listening) return { close: async () => wakeListener.remove(listener) };
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
  protected insertJobs(db: PgExecutor, jobs: readonly NewJob[], known?: ReadonlyMap<string, JobState>, inLine?: ReadonlySet<string>): Promise<Set<string>> {
    return insertWithParentGuard(db, jobs, this.sql, this.connections.autocommits(db), known, inLine);
  }
}

/**
 * A pool of one connection to `url` for LISTEN, built with the node-postgres that the DataSource
 * loaded (so the store imports no driver of its own). Errors on its idle connection are the
 * listener's to notice and reconnect from; the pool must not crash the process with them.
 */
function openListenPool(dataSource: DataSource, url: string): PgPool & { end(): Promise<void> } {
  const { Pool } = (dataSource.driver as unknown as { postgres: { Pool: new (config: object) => PgPool & { end(): Promise<void>; on(event: 'error', listener: () => void): void } } }).postgres;
  const pool = new Pool({ connectionString: url, max: 1 });
  pool.on('error', () => undefined);
  return pool;
}
