import type { Database } from 'better-sqlite3';
import { LEASE_RELINQUISHED, RELINQUISHED_ON_FINAL_ATTEMPT, type JobState } from '../../../core/index.js';
import type { LeaseRef, OutcomeResult } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { haltScheduleQuery } from './halt-schedule.query.js';

/** Hands leases back, fenced: due again now, or dead-lettered on the last attempt, or cancelled if requested. */
export function relinquishJobsQuery(db: Database, t: SqliteNaming) {
  const requeue = `(cancel_requested = 0 AND attempt < max_attempts)`;
  const relinquish = db.prepare(`
    UPDATE ${t.jobs} SET
      state = CASE WHEN cancel_requested = 1 THEN 'cancelled' WHEN ${requeue} THEN 'scheduled' ELSE 'dead_lettered' END,
      run_at = CASE WHEN ${requeue} THEN @now ELSE run_at END,
      worker_id = CASE WHEN ${requeue} THEN NULL ELSE worker_id END,
      leased_until = NULL,
      last_error = CASE WHEN cancel_requested = 0 AND attempt >= max_attempts THEN @final ELSE @relinquished END,
      finished_at = CASE WHEN ${requeue} THEN finished_at ELSE @now END,
      updated_at = @now
    WHERE id = @id AND attempt = @attempt AND state = 'running' AND worker_id = @worker_id AND leased_until > @now
    RETURNING id, state, schedule_id`);
  const halt = haltScheduleQuery(db, t);
  return (workerId: string, leases: readonly LeaseRef[], now: number): OutcomeResult[] =>
    leases.map(({ jobId, attempt }) => {
      const row = relinquish.get({ id: jobId, attempt, worker_id: workerId, final: RELINQUISHED_ON_FINAL_ATTEMPT, relinquished: LEASE_RELINQUISHED, now }) as
        | { id: string; state: JobState; schedule_id: string | null }
        | undefined;
      if (row) halt(row, now);
      return row ? { jobId, attempt, status: 'applied', state: row.state } : { jobId, attempt, status: 'stale' };
    });
}
