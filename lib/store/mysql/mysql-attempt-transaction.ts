import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { SuccessCheck } from '../checked/store-driver.js';
import type { AttemptTransaction, OutcomeResult } from '../job-store.js';
import type { MysqlConnection } from './mysql-driver-types.js';
import { ConnectionExecutor, type MysqlExecutor, type MysqlStatementListener } from './mysql-executor.js';

/** The fenced success write, inside the attempt's open transaction; `after` runs once it committed. */
export type AttemptComplete = (db: MysqlExecutor, check: ReturnType<SuccessCheck>) => Promise<{ result: OutcomeResult; after: () => void }>;

/**
 * An attempt transaction on MySQL: a QueryRunner of the DataSource's own (the handler's writes run
 * in the application's session, with its settings, at READ COMMITTED), that TypeORM sees as
 * already inside a transaction, and that opens the transaction only with its first statement. A handler that
 * never uses the manager costs no round trip and no connection. The success write runs on the
 * same session, fenced like every outcome, and commits with the handler's writes; a stale lease
 * rolls them back.
 */
export class MysqlAttemptTransaction implements AttemptTransaction {
  readonly manager: EntityManager;
  private readonly runner: QueryRunner;
  private readonly send: QueryRunner['query'];
  private begun = false;
  private ended = false;

  constructor(
    dataSource: DataSource,
    private readonly complete: AttemptComplete,
    private readonly check: SuccessCheck,
    private readonly listener?: MysqlStatementListener,
  ) {
    const runner = dataSource.createQueryRunner();
    this.runner = runner;
    // The handler's own statements are the application's: the listener hears only the store's.
    this.send = runner.query.bind(runner);
    // TypeORM then treats every save as part of an outer transaction and opens savepoints, never its own START/COMMIT.
    setTransactionState(runner, true);
    runner.query = (async (...args: Parameters<QueryRunner['query']>) => {
      if (this.ended) throw new Error('This attempt transaction has ended; its EntityManager can no longer be used.');
      if (!this.begun) {
        this.begun = true;
        await this.begin();
      }
      return this.send(...args);
    }) as QueryRunner['query'];
    this.manager = runner.manager;
  }

  get opened(): boolean {
    return this.begun && !this.ended;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  async commitSuccess(workerId: string, jobId: string, attempt: number, output: unknown): Promise<OutcomeResult> {
    const checked = this.check(workerId, jobId, attempt, output);
    try {
      // The outcome commits with the handler's writes, or alone in a transaction of its own if there were none.
      if (!this.begun) {
        this.begun = true;
        await this.begin();
      }
      const connection = (await (this.runner as unknown as { connect(): Promise<MysqlConnection> }).connect()) as MysqlConnection;
      const { result, after } = await this.complete(new ConnectionExecutor(connection, false, this.listener), checked);
      await this.finish(result.status === 'applied' ? 'COMMIT' : 'ROLLBACK');
      after();
      return result;
    } catch (error) {
      await this.finish('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  /**
   * READ COMMITTED for this one transaction (SET TRANSACTION without a scope leaves the session's
   * own level to the application's next transaction). At MySQL's default REPEATABLE READ the
   * outcome write's locking reads would take gap locks, and a scan on a small table would lock
   * every row it passes: concurrent outcomes then deadlock, each one a lease left to lapse.
   */
  private async begin(): Promise<void> {
    await this.control('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    await this.control('START TRANSACTION');
  }

  private control(statement: string): Promise<unknown> {
    this.listener?.(statement);
    return this.send(statement);
  }

  async rollback(): Promise<void> {
    await this.finish('ROLLBACK');
  }

  private async finish(statement: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    try {
      if (this.begun) await this.control(statement);
    } finally {
      setTransactionState(this.runner, false);
      await this.runner.release();
    }
  }
}

/** TypeORM keeps these two fields to decide between START TRANSACTION and SAVEPOINT; set them as if a transaction were open. */
function setTransactionState(runner: QueryRunner, active: boolean): void {
  const state = runner as unknown as { isTransactionActive: boolean; transactionDepth: number };
  state.isTransactionActive = active;
  state.transactionDepth = active ? 1 : 0;
}
