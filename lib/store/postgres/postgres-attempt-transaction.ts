import type { DataSource, EntityManager } from 'typeorm';
import { DeferredTransaction } from '../deferred-transaction.js';
import type { AttemptTransaction } from '../job-store.js';
import type { OutcomeResult } from '../job-store.js';
import type { NormalizedOutcome } from '../checked/store-params.js';
import type { SuccessCheck } from '../checked/store-driver.js';
import type { AppliedOutcomes } from './queries/outcome-results.js';
import { ManagerExecutor, type PgExecutor, type StatementListener } from './pg-executor.js';

type Complete = (db: PgExecutor, workerId: string, outcomes: readonly NormalizedOutcome[]) => Promise<AppliedOutcomes>;

/**
 * An attempt transaction on PostgreSQL: a deferred transaction (deferred-transaction.ts) on a
 * QueryRunner of its own, never the heartbeat's connection. The success write runs through its
 * manager, fenced like every outcome, and commits with the handler's writes.
 */
export class PostgresAttemptTransaction implements AttemptTransaction {
  private readonly tx: DeferredTransaction;

  constructor(
    dataSource: DataSource,
    private readonly complete: Complete,
    private readonly encode: SuccessCheck,
    listener?: StatementListener,
    /** Told after a success committed (held-wake.ts). */
    private readonly committed: (applied: AppliedOutcomes) => void = () => {},
  ) {
    // The success write goes through the manager, so the listener hears what the manager sends (the handler's statements too).
    this.tx = new DeferredTransaction(dataSource, ['START TRANSACTION'], listener, true);
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
    const encoded = this.encode(workerId, jobId, attempt, output);
    try {
      const applied = await this.complete(new ManagerExecutor(this.tx.manager), encoded.workerId, encoded.outcomes);
      const [result] = applied.results;
      await this.tx.end(result?.status === 'applied' ? 'COMMIT' : 'ROLLBACK');
      this.committed(applied);
      return result!;
    } catch (error) {
      await this.tx.end('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  async rollback(): Promise<void> {
    await this.tx.end('ROLLBACK');
  }
}
