import type { DataSource } from 'typeorm';
import type { FinishMode, HistoryPolicy, SchedulerLimits } from '../../core/index.js';
import { SERIAL_POSITION } from '../checked/effect-params.js';
import type { HistoryPositions } from '../checked/store-driver.js';
import { HeldWake } from '../held-wake.js';
import { RateWake } from '../rate-wake.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import { ANY_QUEUE, WakeHub, type WakeListener, type WakeSubscription } from '../wake-hints.js';
import { MysqlConnections } from './mysql-connections.js';
import type { MysqlExecutor, MysqlStatementListener } from './mysql-executor.js';
import { fromMysqlInstant } from './mysql-instant.js';
import { mysqlInstall } from './mysql-install.js';
import { migrateMysql } from './mysql-migrator.js';
import type { MysqlNaming } from './mysql-naming.js';
import { checkHostSessions, checkServer } from './mysql-server-check.js';

/** The driver's settings, resolved and checked from MysqlJobStoreOptions. */
export interface MysqlDriverSettings {
  readonly dataSource: DataSource;
  readonly naming: MysqlNaming;
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  readonly finish: FinishMode;
  /** Sessions in the store's own pool. */
  readonly poolSize: number;
  readonly onStatement?: MysqlStatementListener;
}

/**
 * The first layer of `MysqlDriver`: its sessions, hints, the database's clock and migrate. The
 * driver is one class built in layers, one file per role, so each stays small:
 * `mysql-driver-base.ts` (here), `mysql-driver-reads.ts` (operator reads),
 * `mysql-driver-worker.ts` (the hot path) and `mysql-driver.ts` (operator writes, schedules,
 * observers and maintenance).
 */
export class MysqlDriverBase {
  readonly capabilities: StoreCapabilities;
  readonly positions: HistoryPositions = { shape: SERIAL_POSITION, start: '0' };
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  readonly finish: FinishMode;
  readonly naming: MysqlNaming;
  protected readonly conns: MysqlConnections;
  /** MySQL has no LISTEN: hints reach this process's workers only, and everyone else polls. */
  protected readonly hints = new WakeHub();
  /** Jobs finished in this process: what `waitFor` hears between its polls (subscribeFinishHints). */
  protected readonly finishHints = new WakeHub();
  /** Wakes this process's workers when a rate limit a claim spent frees a start. */
  protected readonly rateWake = new RateWake((queue) => this.hints.emit(queue));
  /** Wakes them when an outcome may free room for held-back jobs. */
  protected readonly heldWake = new HeldWake(() => this.hints.emit(ANY_QUEUE));

  constructor(settings: MysqlDriverSettings) {
    this.limits = settings.limits;
    this.historyPolicy = settings.historyPolicy;
    this.finish = settings.finish;
    this.naming = settings.naming;
    this.conns = new MysqlConnections(settings.dataSource, settings.poolSize, settings.onStatement);
    // No connectionPool: claims, outcomes and heartbeats run on the store's own pool, so attempts
    // holding the DataSource's connections cannot starve them (the sizing rule it states is PostgreSQL's).
    this.capabilities = Object.freeze({
      transactionalEnqueue: true,
      wakeHints: 'process',
      concurrentTransactions: true,
      attemptTransactions: true,
    });
  }

  /**
   * Checks the server (SKIP LOCKED) and the DataSource's sessions (utf8mb4), then applies unseen
   * migrations under the migration lock.
   */
  async migrate(): Promise<void> {
    await this.conns.session((db) => checkServer(db, this.naming.database));
    await checkHostSessions(this.conns.dataSource);
    await migrateMysql(this.conns, this.naming, mysqlInstall());
  }

  async schemaVersion(): Promise<number | null> {
    return this.conns.session(async (db) => {
      const [exists] = await db.query<{ n: number }>(
        `SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ?`,
        [this.naming.database, `${this.naming.prefix}migrations`],
      );
      if (Number(exists?.n ?? 0) === 0) return null;
      const [row] = await db.query<{ version: number | null }>(`SELECT MAX(version) AS version FROM ${this.naming.migrations}`);
      return row?.version ?? null;
    });
  }

  async close(): Promise<void> {
    this.rateWake.close();
    await this.conns.close();
  }

  async subscribeWakeHints(listener: WakeListener): Promise<WakeSubscription> {
    return this.hints.subscribe(listener);
  }

  /** The database's clock, in epoch milliseconds, read in `db`'s session. */
  protected async now(db: MysqlExecutor): Promise<number> {
    const [row] = await db.query<{ now: string }>('SELECT UTC_TIMESTAMP(3) AS now');
    return fromMysqlInstant(row!.now).getTime();
  }
}
