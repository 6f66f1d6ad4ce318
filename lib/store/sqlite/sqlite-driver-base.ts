import type { DataSource } from 'typeorm';
import type { Clock, FinishMode, HistoryPolicy, SchedulerLimits } from '../../core/index.js';
import type { HistoryPositions } from '../checked/store-driver.js';
import { SERIAL_POSITION } from '../checked/effect-params.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import { ANY_QUEUE, type WakeListener, type WakeSubscription } from '../wake-hints.js';
import type { SqliteClaimSignals } from './queries/claim-limited.query.js';
import { SqliteConnection } from './sqlite-connection.js';
import { sqliteInstall } from './sqlite-install.js';
import type { SqliteGate } from './sqlite-gate.js';
import { SqliteHints } from './sqlite-hints.js';
import { HeldWake } from '../held-wake.js';
import { RateWake } from '../rate-wake.js';
import { migrateSqlite } from './sqlite-migrator.js';
import type { SqliteNaming } from './sqlite-naming.js';
import { SqliteOperator } from './sqlite-operator.js';

/** The driver's settings, resolved and checked from SqliteJobStoreOptions. */
export interface SqliteDriverSettings {
  readonly dataSource: DataSource;
  readonly naming: SqliteNaming;
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  readonly finish: FinishMode;
  readonly busyTimeoutMs: number;
  readonly clock?: Clock;
}

/**
 * The first layer of `SqliteDriver`: its connection, hints and the parts every role shares.
 * SqliteDriver is one class built in layers, one file per role, so each stays small.
 */
export class SqliteDriverBase {
  readonly capabilities: StoreCapabilities = Object.freeze({
    transactionalEnqueue: true,
    wakeHints: 'process',
    concurrentTransactions: false,
    attemptTransactions: true,
    serialWrites: true,
  });

  readonly positions: HistoryPositions = { shape: SERIAL_POSITION, start: '0' };
  readonly limits: SchedulerLimits;
  readonly historyPolicy: HistoryPolicy;
  readonly finish: FinishMode;
  protected readonly conn: SqliteConnection;
  protected readonly hints: SqliteHints;
  /** Wakes this process's workers when a rate limit a claim spent frees a start. */
  protected readonly rateWake = new RateWake((queue) => this.hints.emit(queue));
  /** Wakes them when an outcome may free room for held-back jobs. */
  protected readonly heldWake = new HeldWake(() => this.hints.emit(ANY_QUEUE));
  protected readonly claimSignals: SqliteClaimSignals = {
    rateWake: (delayMs) => this.rateWake.after(delayMs),
    claimAgain: () => this.heldWake.again(),
    held: (seen) => this.heldWake.seen(seen),
  };
  protected readonly operator: SqliteOperator;

  constructor(settings: SqliteDriverSettings) {
    this.limits = settings.limits;
    this.historyPolicy = settings.historyPolicy;
    this.finish = settings.finish;
    this.conn = new SqliteConnection(settings.dataSource, settings.naming, settings.busyTimeoutMs, settings.clock);
    this.hints = new SqliteHints(this.conn);
    this.operator = new SqliteOperator(this.conn, this.hints);
  }

  get naming(): SqliteNaming {
    return this.conn.naming;
  }

  get gate(): SqliteGate {
    return this.conn.gate;
  }

  async migrate(): Promise<void> {
    const { db, gate } = this.conn;
    await gate.exclusive(async () => {
      // Switching to WAL needs the file to itself: another process on it makes this SQLITE_BUSY.
      await this.conn.retryBusy(() => {
        if (!db.memory && String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') {
          db.pragma('journal_mode = WAL');
        }
      });
      // The store never waits on this (it backs off without blocking; see retryBusy), but your own
      // statements outside a transaction do: keep a floor so they wait for a neighbour, not fail.
      if (Number(db.pragma('busy_timeout', { simple: true })) < 1_000) db.pragma('busy_timeout = 5000');
      await this.conn.retryBusy(() => migrateSqlite(db, this.naming, sqliteInstall(this.naming, this.historyPolicy)));
    });
    this.conn.prepare();
  }

  async schemaVersion(): Promise<number | null> {
    return this.conn.read(() => this.conn.boot.schemaVersion());
  }

  async close(): Promise<void> {
    this.rateWake.close();
  }

  async subscribeWakeHints(listener: WakeListener): Promise<WakeSubscription> {
    return this.hints.subscribe(listener);
  }
}
