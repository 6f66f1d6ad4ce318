import type { Database } from 'better-sqlite3';
import type { OutcomeResult } from '../../job-store.js';
import type { NormalizedOutcome } from '../../checked/store-params.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import type { FinishMode, JobState } from '../../../core/index.js';
import { haltScheduleQuery } from './halt-schedule.query.js';

/**
 * The fenced outcome write. A report changes its row only while that worker holds the live lease
 * for that attempt; otherwise it matches nothing and is stale. The state rules are the core
 * lifecycle's, as in the PostgreSQL statement.
 *
 * Under the `lean` finish a success without output first tries the lean delete: the same fence,
 * and the rules of the PostgreSQL effects trigger for what keeps a job (a dependant, a unique key,
 * an observer still to be fed its entries). A job it deletes never writes its success to the
 * history, and its earlier entries and its own edges go with it. A report it matches nothing for
 * goes on to the write above, which keeps the job, or finds it stale. One writer at a time, so
 * nothing can add a dependant between the two.
 */
export function completeJobsQuery(db: Database, t: SqliteNaming) {
  const snooze = `(@kind = 'snoozed' AND cancel_requested = 0)`;
  const retry = `(cancel_requested = 0 AND (@kind = 'snoozed' OR (@kind = 'failed' AND attempt < max_attempts)))`;
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
      max_attempts = CASE WHEN ${snooze} THEN max_attempts + 1 ELSE max_attempts END,
      snoozes = CASE WHEN ${snooze} THEN snoozes + 1 ELSE snoozes END,
      leased_until = NULL,
      last_error = CASE WHEN @kind = 'succeeded' THEN last_error ELSE @error END,
      output = CASE WHEN @kind = 'succeeded' THEN @output ELSE output END,
      finished_at = CASE WHEN ${retry} THEN finished_at ELSE @now END,
      updated_at = @now
    WHERE id = @id AND attempt = @attempt AND state = 'running' AND worker_id = @worker_id AND leased_until > @now
    RETURNING id, state, schedule_id`);
  // A cursor with no filter (null) hears everything; its position is the id of the last entry it was fed.
  const leanDelete = db.prepare(`
    DELETE FROM ${t.jobs}
    WHERE id = @id AND attempt = @attempt AND state = 'running' AND worker_id = @worker_id AND leased_until > @now
      AND unique_key IS NULL AND window_kind IS NOT 'throttle' AND sequence_key IS NULL
      AND NOT EXISTS (SELECT 1 FROM ${t.dependencies} d WHERE d.parent_id = @id)
      AND NOT EXISTS (
        SELECT 1 FROM ${t.cursors} c
        WHERE (c.jobs IS NULL OR EXISTS (SELECT 1 FROM json_each(c.jobs) n WHERE n.value = ${t.jobs}.name))
          AND (c.states IS NULL OR EXISTS (
            SELECT 1 FROM json_each(c.states) s
            WHERE s.value = 'succeeded'
              OR EXISTS (SELECT 1 FROM ${t.history} h WHERE h.job_id = @id AND h.state = s.value AND h.id > c.last_id))))
    RETURNING id`);
  const leanHistory = db.prepare(`DELETE FROM ${t.history} WHERE job_id = ?`);
  const leanEdges = db.prepare(`DELETE FROM ${t.dependencies} WHERE child_id = ?`);
  const halt = haltScheduleQuery(db, t);
  const lean = (workerId: string, o: NormalizedOutcome, now: number): boolean => {
    if (o.kind !== 'succeeded' || (o.output !== null && o.output !== 'null')) return false;
    if (leanDelete.get({ id: o.jobId, attempt: o.attempt, worker_id: workerId, now }) === undefined) return false;
    leanHistory.run(o.jobId);
    leanEdges.run(o.jobId);
    return true;
  };
  return (workerId: string, outcomes: readonly NormalizedOutcome[], now: number, finish: FinishMode): OutcomeResult[] =>
    outcomes.map((o) => {
      if (finish === 'lean' && lean(workerId, o, now)) return { jobId: o.jobId, attempt: o.attempt, status: 'applied', state: 'succeeded' };
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
