import type { DataSource } from 'typeorm';
import { assertOptionsObject, checkOptions, InvalidArgumentError, resolveLimits, type Clock, type FinishMode, type HistoryPolicy, type SchedulerLimits } from '../../core/index.js';
import { CheckedStore } from '../checked/checked-store.js';
import { assertFinishMode, assertHistoryPolicy } from '../checked/effect-params.js';
import { SqliteDriver } from './sqlite-driver.js';
import type { SqliteDriverSettings } from './sqlite-driver-base.js';
import type { SqliteGate } from './sqlite-gate.js';
import { sqliteNaming, type SqliteNaming } from './sqlite-naming.js';

/** Options of {@link SqliteJobStore}: the DataSource it runs on, its table prefix, its limits and how long it waits for the lock. */
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
  /**
   * What this store's outcome writes do with a job that succeeds: `keep` it (default), or `lean`:
   * delete it, with its history, inside the fenced outcome write, when it has no dependants, no
   * output, no unique key, and no observer still to be fed its entries (docs/stores.md#lean-finish).
   */
  readonly finish?: FinishMode;
  /**
   * The clock the store stamps and compares job times by, instead of the database's. For tests (the
   * testing kit passes its manual clock). History entries are stamped with it too, so verify
   * judges them against leases on one clock (docs/verify.md); the migrations' timestamps still
   * come from the database. Default: the database's clock.
   */
  readonly clock?: Clock;
}

/**
 * The embedded store, on a SQLite file through TypeORM's better-sqlite3 driver. It needs no
 * server and suits any number of processes on one host. SQLite has one writer at a time, and
 * TypeORM shares one connection per DataSource, so this adapter runs one transaction at a time per
 * DataSource (see {@link SqliteGate}); across processes the file lock does the same.
 */
export class SqliteJobStore extends CheckedStore {
  /** The store's table names. */
  readonly naming: SqliteNaming;
  /** Serializes every transaction on the DataSource; attempt transactions run through it too. */
  readonly gate: SqliteGate;

  constructor(options: SqliteJobStoreOptions) {
    const driver = new SqliteDriver(sqliteDriverSettings(options));
    super(driver);
    this.naming = driver.naming;
    this.gate = driver.gate;
  }
}

/** Checks the store's options, in the order the constructor always has, and fills in the defaults. */
function sqliteDriverSettings(options: SqliteJobStoreOptions): SqliteDriverSettings {
  assertOptionsObject(options, 'SqliteJobStore options');
  // A misspelt option (`busyTimeout`) would otherwise leave its default in place, in silence.
  checkOptions(options, ['dataSource', 'tablePrefix', 'limits', 'busyTimeoutMs', 'historyPolicy', 'finish', 'clock'], { what: 'SqliteJobStore' });
  const { dataSource } = options;
  if (dataSource?.options?.type !== 'better-sqlite3') {
    throw new InvalidArgumentError('SqliteJobStore needs a TypeORM DataSource of type "better-sqlite3".', 'dataSource');
  }
  if (!dataSource.isInitialized) {
    throw new InvalidArgumentError('SqliteJobStore needs an initialized DataSource; call dataSource.initialize() first.', 'dataSource');
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 30_000;
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 1) {
    throw new InvalidArgumentError(`busyTimeoutMs must be a whole number of milliseconds of at least 1, got ${String(options.busyTimeoutMs)}.`, 'busyTimeoutMs');
  }
  return {
    dataSource,
    naming: sqliteNaming(options.tablePrefix),
    limits: resolveLimits(options.limits),
    historyPolicy: assertHistoryPolicy(options.historyPolicy),
    finish: assertFinishMode(options.finish),
    busyTimeoutMs,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  };
}
