import type { DataSource, EntityManager } from 'typeorm';
import { DeferredTransaction } from '../deferred-transaction.js';
import type { SuccessCheck } from '../checked/store-driver.js';
import type { AttemptTransaction, OutcomeResult } from '../job-store.js';
import type { MysqlConnection } from './mysql-driver-types.js';
import { ConnectionExecutor, type MysqlExecutor, type MysqlStatementListener } from './mysql-executor.js';

/** The fenced success write, inside the attempt's open transaction; `after` runs once it committed. */
export type AttemptComplete = (db: MysqlExecutor, check: ReturnType<SuccessCheck>) => Promise<{ result: OutcomeResult; after: () => void }>;

/**
 * An attempt transaction on MySQL: a deferred transaction (deferred-transaction.ts) on one of the
 * DataSource's sessions, so the handler's writes run in the application's session, with its
 * settings. The success write runs on the same session, fenced like every outcome, and commits
 * with the handler's writes; a stale lease rolls them back.
 *
 * It opens at READ COMMITTED (SET TRANSACTION without a scope leaves the session's own level to
 * the application's next transaction). At MySQL's default REPEATABLE READ the outcome write's
 * locking reads would take gap locks, and a scan on a small table would lock every row it
 * passes: concurrent outcomes then deadlock, each one a lease left to lapse.
 */
export class MysqlAttemptTransaction implements AttemptTransaction {
  private readonly tx: DeferredTransaction;

  constructor(
    dataSource: DataSource,
    private readonly complete: AttemptComplete,
    private readonly check: SuccessCheck,
    private readonly listener?: MysqlStatementListener,
  ) {
    // The listener hears only the store's statements: the handler's are the application's.
    this.tx = new DeferredTransaction(dataSource, ['SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'START TRANSACTION'], listener);
  }

  get manager(): EntityManager {
    return this.tx.manager;
  }

  get opened(): boolean {
    return this.tx.opened;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  async commitSuccess(workerId: string, jobId: string, attempt: number, output: unknown): Promise<OutcomeResult> {
    const checked = this.check(workerId, jobId, attempt, output);
    try {
      // The outcome commits with the handler's writes, or alone in a transaction of its own if there were none.
      await this.tx.open();
      const connection = (await (this.tx.runner as unknown as { connect(): Promise<MysqlConnection> }).connect()) as MysqlConnection;
      const { result, after } = await this.complete(new ConnectionExecutor(connection, false, this.listener), checked);
      await this.tx.end(result.status === 'applied' ? 'COMMIT' : 'ROLLBACK');
      after();
      return result;
    } catch (error) {
      await this.tx.end('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  async rollback(): Promise<void> {
    await this.tx.end('ROLLBACK');
  }
}
