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
  /**
   * How the DataSource's connections reach PostgreSQL. `session` (default): each is a server
   * session of its own (a direct connection, or PgBouncer in session mode). `transaction`: they go
   * through a pooler in transaction mode (PgBouncer `pool_mode = transaction`), which hands each
   * transaction to any server connection, so nothing the store does may outlive a transaction:
   * statements are not prepared (unless `preparedStatements` says so) and wake-ups come over
   * `listenUrl`, or from polling alone (docs/operations.md#pgbouncer).
   */
  readonly poolMode?: 'session' | 'transaction';
  /**
   * Prepare each statement once per connection. Default true in session mode and false in
   * transaction mode, where PgBouncer 1.21 and later keeps prepared statements when its
   * `max_prepared_statements` is set.
   */
  readonly preparedStatements?: boolean;
  /**
   * With `poolMode: 'transaction'`: a connection string straight to the PostgreSQL server, past the
   * pooler, on which the store holds one connection in LISTEN for wake-ups. Without it, workers
   * hear of jobs from other processes at their next poll (`pollIntervalMs`).
   */
  readonly listenUrl?: string;
}

/** The keys {@link PostgresJobStoreOptions} has. */
const POSTGRES_STORE_KEYS = ['dataSource', 'schema', 'tablePrefix', 'limits', 'onStatement', 'historyPolicy', 'finish', 'asyncClaimCommit', 'poolMode', 'preparedStatements', 'listenUrl'];

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
  /** Whether the DataSource's connections are sessions or go through a pooler in transaction mode (see the option). */
  readonly poolMode: 'session' | 'transaction';
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
    const pooling = checkPooling(options);
    const driver = new PostgresDriver({ dataSource, naming, limits, historyPolicy, finish, asyncClaimCommit, onStatement: options.onStatement, ...pooling });
    super(driver);
    this.pg = driver;
    this.naming = naming;
    this.asyncClaimCommit = asyncClaimCommit;
    this.wakeListener = driver.wakeListener;
    this.poolMode = pooling.poolMode;
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

/**
 * Checks poolMode, preparedStatements and listenUrl and resolves their defaults. A connection
 * string carries a password, so no message repeats it.
 */
function checkPooling(options: PostgresJobStoreOptions): { poolMode: 'session' | 'transaction'; preparedStatements: boolean; listenUrl?: string } {
  const { poolMode = 'session', preparedStatements, listenUrl } = options;
  if (poolMode !== 'session' && poolMode !== 'transaction') {
    throw new InvalidArgumentError(`poolMode must be "session" or "transaction", got ${showValue(poolMode)}.`, 'poolMode');
  }
  if (preparedStatements !== undefined && typeof preparedStatements !== 'boolean') {
    throw new InvalidArgumentError(`preparedStatements must be true or false, got ${showValue(preparedStatements)}.`, 'preparedStatements');
  }
  if (listenUrl !== undefined) {
    if (typeof listenUrl !== 'string' || !/^postgres(ql)?:\/\/\S+$/.test(listenUrl)) {
      throw new InvalidArgumentError('listenUrl must be a postgres:// or postgresql:// connection string straight to the server.', 'listenUrl');
    }
    if (poolMode !== 'transaction') {
      throw new InvalidArgumentError("listenUrl only applies with poolMode: 'transaction'; in session mode the store listens on the DataSource's own connections.", 'listenUrl');
    }
  }
  return { poolMode, preparedStatements: preparedStatements ?? poolMode === 'session', ...(listenUrl === undefined ? {} : { listenUrl }) };
}
