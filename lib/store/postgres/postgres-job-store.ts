import type { DataSource } from 'typeorm';
import { assertOptionsObject, checkOptions, InvalidArgumentError, resolveLimits, showValue, type FinishMode, type HistoryPolicy, type SchedulerLimits } from '../../core/index.js';
import { CheckedStore } from '../checked/checked-store.js';
import { assertFinishMode, assertHistoryPolicy } from '../checked/effect-params.js';
import type { StatementListener } from './pg-executor.js';
import type { PgWakeListener } from './pg-wake-listener.js';
import { PostgresDriver } from './postgres-driver.js';
import { postgresNaming, type PostgresNaming } from './postgres-naming.js';

/** Options of {@link PostgresJobStore}: the DataSource it runs on, where its tables live, and its limits. */
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
   * What this store's outcome writes do with a job that succeeds: `keep` it (default), or `lean`:
   * delete it, with its history, inside the fenced outcome write, when it has no dependants, no
   * output, no unique key, and no observer still to be fed its entries (docs/stores.md#lean-finish).
   * Per store: each node's outcome writes follow its own option.
   */
  readonly finish?: FinishMode;
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

/** The keys {@link PostgresJobStoreOptions} has. */
const POSTGRES_STORE_KEYS = ['dataSource', 'schema', 'tablePrefix', 'limits', 'onStatement', 'historyPolicy', 'finish', 'asyncClaimCommit'];

/**
 * The production store, on PostgreSQL. Claims use `FOR NO KEY UPDATE SKIP LOCKED`, every instant comes
 * from the database's `now()`, and each hot-path operation (enqueue, claim, heartbeat, outcome,
 * relinquish, sweep) is a single statement, whatever the batch size. The checks live in
 * {@link CheckedStore}; the statements in {@link PostgresDriver}.
 */
export class PostgresJobStore extends CheckedStore {
  /** The installation's schema, table and channel names. */
  readonly naming: PostgresNaming;
  /** Whether claims commit without waiting for their WAL flush (see the option). */
  readonly asyncClaimCommit: boolean;
  /** The LISTEN connection, opened with the first wake-hint subscriber. */
  readonly wakeListener: PgWakeListener;
  private readonly pg: PostgresDriver;

  constructor(options: PostgresJobStoreOptions) {
    assertOptionsObject(options, 'PostgresJobStore options');
    // A misspelt option (`schemaName`) would otherwise put the tables where the default says, in silence.
    checkOptions(options, POSTGRES_STORE_KEYS, { what: 'PostgresJobStore' });
    const { dataSource } = options;
    if (dataSource?.options?.type !== 'postgres') {
      throw new InvalidArgumentError('PostgresJobStore needs a TypeORM DataSource of type "postgres".', 'dataSource');
    }
    if (!dataSource.isInitialized) {
      throw new InvalidArgumentError('PostgresJobStore needs an initialized DataSource; call dataSource.initialize() first.', 'dataSource');
    }
    const naming = postgresNaming(options.schema, options.tablePrefix);
    const limits = resolveLimits(options.limits);
    const historyPolicy = assertHistoryPolicy(options.historyPolicy);
    const finish = assertFinishMode(options.finish);
    if (options.asyncClaimCommit !== undefined && typeof options.asyncClaimCommit !== 'boolean') {
      throw new InvalidArgumentError(`asyncClaimCommit must be true or false, got ${showValue(options.asyncClaimCommit)}.`, 'asyncClaimCommit');
    }
    const asyncClaimCommit = options.asyncClaimCommit === true;
    const driver = new PostgresDriver({ dataSource, naming, limits, historyPolicy, finish, asyncClaimCommit, onStatement: options.onStatement });
    super(driver);
    this.pg = driver;
    this.naming = naming;
    this.asyncClaimCommit = asyncClaimCommit;
    this.wakeListener = driver.wakeListener;
  }

  /** The most connections the DataSource's pool opens (node-postgres defaults to 10). */
  get poolSize(): number {
    return this.pg.connections.poolSize;
  }

  /** The analyze guard's latest check, started by a full claim and not awaited by it (tests await it). */
  get statistics(): Promise<boolean> {
    return this.pg.statistics;
  }
}
