import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { AttemptTransaction } from '../job-store.js';
import type { OutcomeResult } from '../job-store.js';
import type { NormalizedOutcome } from '../checked/store-params.js';
import type { SuccessCheck } from '../checked/store-driver.js';
import type { AppliedOutcomes } from './queries/outcome-results.js';
import { ManagerExecutor, type PgExecutor, type StatementListener } from './pg-executor.js';

type Complete = (db: PgExecutor, workerId: string, outcomes: readonly NormalizedOutcome[]) => Promise<AppliedOutcomes>;

/**
 * An attempt transaction on PostgreSQL: a QueryRunner of its own (never the heartbeat's
 * connection) that TypeORM sees as already inside a transaction, and that sends BEGIN only with
 * its first statement. A handler that never uses the manager costs no round trip and no connection.
 */
export class PostgresAttemptTransaction implements AttemptTransaction {
  readonly manager: EntityManager;
  private readonly runner: QueryRunner;
  private readonly send: QueryRunner['query'];
  private begun = false;
  private ended = false;

  constructor(
    dataSource: DataSource,
    private readonly complete: Complete,
    private readonly encode: SuccessCheck,
    private readonly listener?: StatementListener,
    /** Told after a success committed (held-wake.ts). */
    private readonly committed: (applied: AppliedOutcomes) => void = () => {},
  ) {
    const runner = dataSource.createQueryRunner();
    this.runner = runner;
    const send = runner.query.bind(runner);
    this.send = ((...args: Parameters<QueryRunner['query']>) => {
      this.listener?.(args[0]);
      return send(...args);
    }) as QueryRunner['query'];
    // TypeORM then treats every save as part of an outer transaction and opens savepoints, never its own BEGIN/COMMIT.
    setTransactionState(runner, true);
    runner.query = (async (...args: Parameters<QueryRunner['query']>) => {
      if (this.ended) throw new Error('This attempt transaction has ended; its EntityManager can no longer be used.');
      if (!this.begun) {
        this.begun = true;
        await this.send('START TRANSACTION');
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
    const encoded = this.encode(workerId, jobId, attempt, output);
    try {
      const applied = await this.complete(new ManagerExecutor(this.manager), encoded.workerId, encoded.outcomes);
      const [result] = applied.results;
      await this.finish(result?.status === 'applied' ? 'COMMIT' : 'ROLLBACK');
      this.committed(applied);
      return result!;
    } catch (error) {
      await this.finish('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  async rollback(): Promise<void> {
    await this.finish('ROLLBACK');
  }

  private async finish(statement: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    try {
      if (this.begun) await this.send(statement);
    } finally {
      setTransactionState(this.runner, false);
      await this.runner.release();
    }
  }
}

/** TypeORM keeps these two fields to decide between BEGIN and SAVEPOINT; set them as if a transaction were open. */
function setTransactionState(runner: QueryRunner, active: boolean): void {
  const state = runner as unknown as { isTransactionActive: boolean; transactionDepth: number };
  state.isTransactionActive = active;
  state.transactionDepth = active ? 1 : 0;
}
