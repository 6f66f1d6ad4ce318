import type { Database } from 'better-sqlite3';
import type { OutcomeResult } from '../../job-store.js';
import type { NormalizedOutcome } from '../../checked/store-params.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import type { JobState } from '../../../core/index.js';
import { haltScheduleQuery } from './halt-schedule.query.js';

/**
 * The fenced outcome write. A report changes its row only while that worker holds the live lease
 * for that attempt; otherwise it matches nothing and is stale. The state rules are the core
 * lifecycle's, as in the PostgreSQL statement.
 */
export function completeJobsQuery(db: Database, t: SqliteNaming) {
  const retry = `(@kind = 'failed' AND cancel_requested = 0 AND attempt < max_attempts)`;
  const complete = db.prepare(`
    UPDATE ${t.jobs} SET
      state = CASE
        WHEN @kind = 'succeeded' THEN 'succeeded'
        WHEN cancel_requested = 1 THEN 'cancelled'
        WHEN @kind = 'quarantined' THEN 'quarantined'
        WHEN ${retry} THEN 'scheduled'
        ELSE 'dead_lettered' END,
      run_at = CASE WHEN ${retry} THEN @now + @delay_ms ELSE run_at END,
      worker_id = CASE WHEN ${retry} THEN NULL ELSE worker_id END,
      leased_until = NULL,
      last_error = CASE WHEN @kind = 'succeeded' THEN last_error ELSE @error END,
      output = CASE WHEN @kind = 'succeeded' THEN @output ELSE output END,
      finished_at = CASE WHEN ${retry} THEN finished_at ELSE @now END,
      updated_at = @now
    WHERE id = @id AND attempt = @attempt AND state = 'running' AND worker_id = @worker_id AND leased_until > @now
    RETURNING id, state, schedule_id`);
  const halt = haltScheduleQuery(db, t);
  return (workerId: string, outcomes: readonly NormalizedOutcome[], now: number): OutcomeResult[] =>
    outcomes.map((o) => {
      const row = complete.get({
        id: o.jobId,
        attempt: o.attempt,
        worker_id: workerId,
        kind: o.kind,
        output: o.output,
        error: o.error,
        delay_ms: o.retryDelayMs,
        now,
      }) as { id: string; state: JobState; schedule_id: string | null } | undefined;
      if (row) halt(row, now);
      return row ? { jobId: o.jobId, attempt: o.attempt, status: 'applied', state: row.state } : { jobId: o.jobId, attempt: o.attempt, status: 'stale' };
    });
}
