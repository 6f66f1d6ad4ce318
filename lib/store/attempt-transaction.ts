import type { EntityManager } from 'typeorm';
import type { OutcomeResult } from './job-store.js';

/**
 * One attempt's database transaction. The handler's writes through `manager` and the fenced
 * success write commit together, or not at all. Nothing is sent to the database until the handler
 * first uses `manager`, so a handler that never touches it pays nothing.
 */
export interface AttemptTransaction {
  /** An EntityManager bound to this attempt's transaction. */
  readonly manager: EntityManager;
  /** True once the handler used the manager and a transaction is open. */
  readonly opened: boolean;
  /** Runs handler code as this attempt, so the store can tell its queries from other callers'. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Writes the success outcome inside the transaction, fenced like every outcome, then commits; a
   * stale lease rolls everything back instead. Only valid while `opened`.
   */
  commitSuccess(workerId: string, jobId: string, attempt: number, output: unknown): Promise<OutcomeResult>;
  /** Rolls back whatever the handler wrote. Safe to call when nothing was opened. */
  rollback(): Promise<void>;
}
