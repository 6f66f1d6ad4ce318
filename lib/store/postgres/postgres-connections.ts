import type { DataSource, EntityManager } from 'typeorm';
import { InvalidArgumentError } from '../../core/index.js';
import { ManagerExecutor, PoolExecutor, withPooledTransaction, type PgExecutor, type PgPool, type StatementListener } from './pg-executor.js';
import { HeldPool } from './pg-held-pool.js';
import { onPoolEnd } from './pg-pool-end.js';

/**
 * Where the driver's statements go: the DataSource's pool (each statement commits on its own), a
 * short transaction of the driver's own, or a caller's open TypeORM transaction.
 */
export class PostgresConnections {
  /**
   * The DataSource's node-postgres pool, as the store checks connections out of it: each held until
   * given back, and given up when the host ends the pool (pg-held-pool.ts). The store never ends it.
   */
  readonly pool: PgPool;
  private readonly hostPool: PgPool;
  /** Sends each statement on whichever pooled connection is free, in autocommit. */
  readonly db: PgExecutor;

  constructor(
    private readonly dataSource: DataSource,
    private readonly onStatement: StatementListener | undefined,
    /** How long the pool's end waits for a statement in flight before destroying its connection. */
    closeWaitMs?: number,
    /** Whether statements are prepared once per connection (not through a pooler in transaction mode). */
    private readonly prepared = true,
  ) {
    this.hostPool = (dataSource.driver as unknown as { master: PgPool }).master;
    this.pool = new HeldPool(this.hostPool, closeWaitMs);
    this.db = new PoolExecutor(this.pool, onStatement, prepared);
  }

  /** The most connections the DataSource's pool opens (node-postgres defaults to 10). */
  get poolSize(): number {
    return (this.hostPool as unknown as { options?: { max?: number } }).options?.max ?? 10;
  }

  /** Calls `onEnd` when the host ends the pool (destroys the DataSource); returns the unsubscribe. */
  onPoolEnd(onEnd: () => void): () => void {
    return onPoolEnd(this.hostPool, onEnd);
  }

  /** Whether statements on `db` commit one by one, so nothing `db` locked is held between them. */
  autocommits(db: PgExecutor): boolean {
    return db === this.db;
  }

  /** Runs `work` in its own short transaction on one pooled connection. */
  transaction<T>(work: (db: PgExecutor) => Promise<T>): Promise<T> {
    return withPooledTransaction(this.pool, (client) => work(new PoolExecutor(client, this.onStatement, this.prepared)));
  }

  /**
   * An executor inside the caller's transaction. Only the DataSource can tell whether a manager is
   * its own and in an open transaction, so these two refusals stay here rather than in the checks.
   */
  joined(manager: EntityManager): PgExecutor {
    if (manager?.connection !== this.dataSource) {
      throw new InvalidArgumentError('The manager passed to enqueue belongs to another DataSource; use one from the DataSource the scheduler was given.', 'manager');
    }
    if (!manager.queryRunner?.isTransactionActive) {
      throw new InvalidArgumentError(
        'The manager passed to enqueue is not inside an open transaction; use the manager that dataSource.transaction() hands you.',
        'manager',
      );
    }
    return new ManagerExecutor(manager, this.onStatement);
  }
}
