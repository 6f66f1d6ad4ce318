import type { DataSource, EntityManager } from 'typeorm';
import type { AttemptTransaction } from '../job-store.js';
import type { OutcomeResult } from '../job-store.js';
import { AttemptOwner, type SqliteGate } from './sqlite-gate.js';

/**
 * An attempt transaction on SQLite. There is one connection per DataSource, so the attempt's
 * transaction is *the* transaction: it opens on the handler's first query, holds the connection
 * (every other writer in the process waits) until the outcome is written, and commits with it.
 * It opens with BEGIN IMMEDIATE, so it holds the file's write lock too: a handler's writes never
 * meet another process's lock, and a lock held past `busyTimeoutMs` fails that first query with
 * StoreBusyError, before anything was written.
 */
export class SqliteAttemptTransaction implements AttemptTransaction {
  readonly manager: EntityManager;
  private readonly owner = new AttemptOwner();

  constructor(
    dataSource: DataSource,
    private readonly gate: SqliteGate,
    private readonly completeInside: (workerId: string, jobId: string, attempt: number, output: unknown) => OutcomeResult,
  ) {
    this.manager = dataSource.createQueryRunner().manager;
  }

  get opened(): boolean {
    return this.owner.open && !this.owner.ended;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return this.gate.runAs(this.owner, work);
  }

  async commitSuccess(workerId: string, jobId: string, attempt: number, output: unknown): Promise<OutcomeResult> {
    let result: OutcomeResult;
    try {
      result = this.completeInside(workerId, jobId, attempt, output);
    } catch (error) {
      await this.gate.endAttempt(this.owner, 'ROLLBACK');
      throw error;
    }
    await this.gate.endAttempt(this.owner, result.status === 'applied' ? 'COMMIT' : 'ROLLBACK');
    return result;
  }

  async rollback(): Promise<void> {
    await this.gate.endAttempt(this.owner, 'ROLLBACK');
  }
}
