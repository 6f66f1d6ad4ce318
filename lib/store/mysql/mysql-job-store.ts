import type { DataSource } from 'typeorm';
import { assertOptionsObject, checkOptions, InvalidArgumentError, resolveLimits, showValue, type FinishMode, type HistoryPolicy, type SchedulerLimits } from '../../core/index.js';
import { CheckedStore } from '../checked/checked-store.js';
import { assertFinishMode, assertHistoryPolicy } from '../checked/effect-params.js';
import { MysqlDriver } from './mysql-driver.js';
import type { MysqlStatementListener } from './mysql-executor.js';
import { mysqlNaming, type MysqlNaming } from './mysql-naming.js';

/** Options of {@link MysqlJobStore}: the DataSource it runs on, where its tables live, and its limits. */
export interface MysqlJobStoreOptions {
  /**
   * An initialized TypeORM DataSource of type `mysql` or `mariadb` (driver mysql2). The store opens
   * a small pool of its own to the same server with the same credentials (`poolSize`), and runs
   * your transactions' enqueues and its attempt transactions on the DataSource's sessions.
   */
  readonly dataSource: DataSource;
  /** The database holding the store's tables. Default: the DataSource's own. */
  readonly database?: string;
  /** A prefix for the table names. Default `durable_scheduler_`. */
  readonly tablePrefix?: string;
  readonly limits?: Partial<SchedulerLimits>;
  /** Sessions in the store's own pool. Default 10. */
  readonly poolSize?: number;
  /** Called with the text of every statement the store sends (for tests and diagnostics). */
  readonly onStatement?: MysqlStatementListener;
  /** What the transition history keeps. Default `transitions_and_errors`; installation-wide. */
  readonly historyPolicy?: HistoryPolicy;
  /**
   * What this store's outcome writes do with a job that succeeds: `keep` it (default), or `lean`:
   * delete it, with its history, inside the fenced outcome write, when it has no dependants, no
   * output, no unique key, and no observer still to be fed its entries (docs/stores.md#lean-finish).
   */
  readonly finish?: FinishMode;
}

const MYSQL_STORE_KEYS = ['dataSource', 'database', 'tablePrefix', 'limits', 'poolSize', 'onStatement', 'historyPolicy', 'finish'];

/** The widest values the schema's columns hold (migrations/0019_schema.sql). */
const COLUMN_CEILINGS: Partial<Record<keyof SchedulerLimits, { readonly max: number; readonly column: string }>> = {
  maxNameLength: { max: 255, column: 'VARCHAR(255)' },
  maxErrorBytes: { max: 16_777_215, column: 'MEDIUMTEXT' },
  maxProgressBytes: { max: 65_535, column: 'TEXT' },
};

/**
 * The store on MySQL 8.0.1+ or MariaDB 10.6+, through TypeORM's mysql2 driver: transactional
 * enqueue in your transactions, claims with FOR UPDATE SKIP LOCKED, every effect applied in the
 * outcome's own transaction, and instants on the server's clock in UTC. MySQL has no LISTEN, so
 * wake-up hints reach this process's workers only; other processes poll (docs/stores.md, MySQL).
 */
export class MysqlJobStore extends CheckedStore {
  /** The store's table names. */
  readonly naming: MysqlNaming;

  constructor(options: MysqlJobStoreOptions) {
    assertOptionsObject(options, 'MysqlJobStore options');
    checkOptions(options, MYSQL_STORE_KEYS, { what: 'MysqlJobStore' });
    const { dataSource } = options;
    const type = dataSource?.options?.type;
    if (type !== 'mysql' && type !== 'mariadb') {
      throw new InvalidArgumentError('MysqlJobStore needs a TypeORM DataSource of type "mysql" or "mariadb".', 'dataSource');
    }
    if (!dataSource.isInitialized) {
      throw new InvalidArgumentError('MysqlJobStore needs an initialized DataSource; call dataSource.initialize() first.', 'dataSource');
    }
    const naming = mysqlNaming(options.tablePrefix, options.database ?? null);
    const limits = resolveLimits(options.limits);
    for (const [key, ceiling] of Object.entries(COLUMN_CEILINGS)) {
      const value = limits[key as keyof SchedulerLimits];
      if (value > ceiling!.max) {
        throw new InvalidArgumentError(`limits.${key} must be at most ${ceiling!.max} on the MySQL store, whose column for it is ${ceiling!.column}, got ${value}.`, `limits.${key}`);
      }
    }
    const poolSize = options.poolSize ?? 10;
    if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 1_000) {
      throw new InvalidArgumentError(`poolSize must be a whole number from 1 to 1000, got ${showValue(options.poolSize)}.`, 'poolSize');
    }
    const driver = new MysqlDriver({
      dataSource,
      naming,
      limits,
      historyPolicy: assertHistoryPolicy(options.historyPolicy),
      finish: assertFinishMode(options.finish),
      poolSize,
      ...(options.onStatement ? { onStatement: options.onStatement } : {}),
    });
    super(driver);
    this.naming = naming;
  }
}
