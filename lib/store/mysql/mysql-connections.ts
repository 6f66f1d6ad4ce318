import type { DataSource, EntityManager } from 'typeorm';
import { InvalidArgumentError, StoreUnavailableError } from '../../core/index.js';
import type { MysqlConnection, MysqlPool } from './mysql-driver-types.js';
import { ConnectionExecutor, isLockFailure, mysqlFailure, sendQuery, type MysqlExecutor, type MysqlStatementListener } from './mysql-executor.js';
import { openStorePool } from './mysql-pool.js';
import { MysqlTransaction } from './mysql-transaction.js';

/** How often a store-owned transaction that lost a lock (1213, 1205) runs again before failing with StoreBusyError. */
export const MYSQL_LOCK_RETRIES = 5;

/**
 * Where the driver's statements go: the store's own pool of sessions (mysql-pool.ts), each in a
 * short transaction of the driver's own, or a caller's open TypeORM transaction on one of the
 * DataSource's sessions. The pool opens on first use and closes with the store.
 */
export class MysqlConnections {
  private pool: Promise<MysqlPool> | null = null;
  private closed = false;

  constructor(
    readonly dataSource: DataSource,
    readonly poolSize: number,
    readonly onStatement?: MysqlStatementListener,
    /** Waits between tries after a lost lock; tests pass one that records instead of sleeping. */
    private readonly backOff: (attempt: number) => Promise<void> = jitteredBackOff,
  ) {}

  /** Runs `work` on one of the store's sessions, outside any transaction (each statement commits on its own). */
  async session<T>(work: (db: MysqlExecutor) => Promise<T>): Promise<T> {
    const connection = await this.checkOut();
    let reusable = false;
    try {
      const result = await work(new ConnectionExecutor(connection, true, this.onStatement));
      reusable = true;
      return result;
    } catch (error) {
      // A statement that failed leaves the session usable; a lost one does not.
      reusable = !(error instanceof StoreUnavailableError);
      throw error;
    } finally {
      if (reusable) connection.release();
      else connection.destroy();
    }
  }

  /**
   * Runs `work` in one transaction of the store's own (mysql-transaction.ts), committed when `work`
   * returns unless `work` committed with its last statements itself. A deadlock (1213) rolls the
   * whole transaction back on the server and a lock wait timeout (1205) only its statement, so
   * either way the transaction is rolled back here and `work` runs again from the start, up to
   * {@link MYSQL_LOCK_RETRIES} times; then the StoreBusyError stands. `work` must keep its effects
   * outside the database (hints, caches) until this returns.
   */
  async transaction<T>(work: (tx: MysqlTransaction) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.session(async (db) => {
          const tx = new MysqlTransaction(db);
          try {
            const result = await work(tx);
            if (!tx.committed) await tx.commitWith();
            return result;
          } finally {
            // A session whose ROLLBACK fails is in an unknown state: session() destroys it.
            if (!tx.committed && tx.begun) {
              await db.run('ROLLBACK').catch((error: unknown) =>
                Promise.reject(new StoreUnavailableError('The store could not roll back a failed transaction; its session is discarded.', { cause: error })),
              );
            }
          }
        });
      } catch (error) {
        if (!isLockFailure(error) || attempt > MYSQL_LOCK_RETRIES) throw mysqlFailure(error);
      }
      await this.backOff(attempt);
    }
  }

  /**
   * An executor inside the caller's transaction, on the DataSource session its manager holds. Only
   * the DataSource can tell whether a manager is its own and in an open transaction.
   */
  async joined(manager: EntityManager): Promise<MysqlExecutor> {
    if (manager?.connection !== this.dataSource) {
      throw new InvalidArgumentError('The manager passed to enqueue belongs to another DataSource; use one from the DataSource the scheduler was given.', 'manager');
    }
    const runner = manager.queryRunner as (typeof manager.queryRunner & { connect(): Promise<MysqlConnection> }) | undefined;
    if (!runner?.isTransactionActive) {
      throw new InvalidArgumentError(
        'The manager passed to enqueue is not inside an open transaction; use the manager that dataSource.transaction() hands you.',
        'manager',
      );
    }
    return new ConnectionExecutor(await runner.connect(), false, this.onStatement);
  }

  async close(): Promise<void> {
    this.closed = true;
    const pool = await this.pool?.catch(() => null);
    this.pool = null;
    if (pool) await new Promise<void>((resolve) => pool.end(() => resolve()));
  }

  private async checkOut(): Promise<MysqlConnection> {
    if (this.closed) throw new StoreUnavailableError('The store is closed; its MySQL sessions are ended.');
    this.pool ??= openStorePool(this.dataSource, this.poolSize);
    const pool = await this.pool;
    return new Promise((resolve, reject) => pool.getConnection((error, connection) => (error ? reject(mysqlFailure(error)) : resolve(connection))));
  }

  /** Sends one statement on a fresh session of the store's, outside any transaction. */
  async once<R>(sql: string, values: readonly unknown[] = []): Promise<R[]> {
    const connection = await this.checkOut();
    try {
      return (await sendQuery(connection, sql, values)) as R[];
    } finally {
      connection.release();
    }
  }
}

/** 2, 4, 8, ... ms, each with up to as much again at random, so two losers of one deadlock do not meet again. */
async function jitteredBackOff(attempt: number): Promise<void> {
  const base = 2 ** attempt;
  await new Promise((resolve) => setTimeout(resolve, base + Math.random() * base));
}
