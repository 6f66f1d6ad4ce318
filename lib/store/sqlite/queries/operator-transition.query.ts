import type { Database } from 'better-sqlite3';
import { JobNotFoundError, transition, type JobEvent } from '../../../core/index.js';
import type { OperatorTransition } from '../../checked/operator-transition.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, lifecycleParams, type SqliteJobRow } from '../sqlite-row.js';

/** Applies an operator event (replay, cancel) with the core lifecycle, inside the caller's write transaction. */
export function operatorTransitionQuery(db: Database, t: SqliteNaming) {
  const read = db.prepare(`SELECT * FROM ${t.jobs} WHERE id = ?`);
  const write = db.prepare(`
    UPDATE ${t.jobs} SET state = @state, run_at = @run_at, attempt = @attempt, max_attempts = @max_attempts, snoozes = @snoozes, worker_id = @worker_id, leased_until = @leased_until,
      cancel_requested = @cancel_requested, last_error = @last_error, output = @output, finished_at = @finished_at, updated_at = @updated_at
    WHERE id = @id
    RETURNING *`);
  return (jobId: string, event: JobEvent, now: number): OperatorTransition => {
    const row = read.get(jobId) as SqliteJobRow | undefined;
    if (!row) throw new JobNotFoundError(jobId);
    const before = fromSqliteRow(row);
    const result = transition(before, event, now);
    if (!result.ok || result.next === before) return { before, after: before, result };
    const after = fromSqliteRow(write.get(lifecycleParams({ ...before, ...result.next })) as SqliteJobRow);
    return { before, after, result };
  };
}
