import { LEASE_RELINQUISHED, RELINQUISHED_ON_FINAL_ATTEMPT } from '../../../core/index.js';
import type { LeaseRef, OutcomeResult } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { haltSchedulesCte } from './halt-schedules.cte.js';
import { outcomeResults } from './outcome-results.js';

/**
 * Hands leases back on shutdown, fenced like an outcome. The job is due again at once with its
 * attempt already charged; the last allowed attempt dead-letters instead, and a cancel request
 * cancels. Requeued jobs wake idle workers. A lease whose hand-back ends the job locks its row
 * `FOR UPDATE` first, as every write that ends a job does (parent-guard.sql.ts); a requeue does not.
 */
export function relinquishJobsQuery(t: PostgresNaming) {
  const requeue = `(NOT j.cancel_requested AND j.attempt < j.max_attempts)`;
  const held = `j.id = r.id AND j.attempt = r.attempt AND j.state = 'running' AND j.worker_id = $1 AND j.leased_until > now()`;
  const text = `
    WITH ending AS MATERIALIZED (
      SELECT j.id FROM ${t.jobs} j, unnest($2::uuid[], $3::integer[]) AS r(id, attempt)
      WHERE ${held} AND NOT ${requeue}
      ORDER BY j.id
      FOR UPDATE OF j
    ), released AS (
      UPDATE ${t.jobs} j SET
        state = CASE WHEN j.cancel_requested THEN 'cancelled' WHEN ${requeue} THEN 'scheduled' ELSE 'dead_lettered' END,
        run_at = CASE WHEN ${requeue} THEN now() ELSE j.run_at END,
        worker_id = CASE WHEN ${requeue} THEN NULL ELSE j.worker_id END,
        leased_until = NULL,
        last_error = CASE WHEN NOT j.cancel_requested AND j.attempt >= j.max_attempts THEN $4 ELSE $6 END,
        finished_at = CASE WHEN ${requeue} THEN j.finished_at ELSE now() END,
        updated_at = now()
      FROM unnest($2::uuid[], $3::integer[]) AS r(id, attempt)
      WHERE (SELECT count(*) FROM ending) >= 0 AND ${held}
      RETURNING j.id, j.state, j.queue, j.schedule_id
    ), ${haltSchedulesCte(t, 'released')}, wake AS (
      SELECT pg_notify($5, queue) FROM (SELECT DISTINCT queue FROM released WHERE state = 'scheduled') due
    )
    SELECT id, state FROM released, (SELECT count(*) FROM wake) AS hinted`;

  return async (db: PgExecutor, workerId: string, leases: readonly LeaseRef[]): Promise<OutcomeResult[]> => {
    if (leases.length === 0) return [];
    const rows = await db.query<{ id: string; state: string }>(text, [
      workerId,
      leases.map((l) => l.jobId),
      leases.map((l) => l.attempt),
      RELINQUISHED_ON_FINAL_ATTEMPT,
      t.channel,
      LEASE_RELINQUISHED,
    ]);
    return outcomeResults(leases, rows);
  };
}
