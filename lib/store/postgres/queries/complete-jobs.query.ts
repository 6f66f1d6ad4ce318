import type { FinishMode } from '../../../core/index.js';
import type { OutcomeResult } from '../../job-store.js';
import type { NormalizedOutcome } from '../../checked/store-params.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { leanFinishSetting } from '../postgres-effects.js';
import { haltSchedulesCte } from './halt-schedules.cte.js';
import { outcomeResults } from './outcome-results.js';

/**
 * The fenced outcome write, for a whole batch in one statement. A report applies only where the
 * row is running under this worker, for that attempt, with a live lease; every other report
 * matches no row, so it changes nothing and comes back stale.
 *
 * The fence sits inside a CASE so the planner cannot match it to the running jobs' partial index:
 * it would then read every running job (and, until vacuum, every version a recent outcome left
 * behind) to hash them, where probing the primary key once per report costs the same at any load.
 *
 * The lease is judged at statement_timestamp(), not now(): inside an attempt transaction now() is
 * the instant the handler's first write began the transaction, so a worker paused past its lease
 * would otherwise find it still live, as of then, when it finally reports. The outcome is dated on
 * the same clock (a retry's run time, finishedAt), as its transition log entry is (postgres-effects.ts).
 *
 * The state rules mirror the core lifecycle: success wins over a cancel request (the work
 * happened); a failure of a cancel-requested job cancels it; a failure with attempts left is
 * rescheduled after its retry delay, otherwise dead-lettered. A dead-lettered or quarantined
 * occurrence stops its schedule in the same statement.
 *
 * The reports that end their job first lock its row `FOR UPDATE` (`ending`, in id order, a
 * one-time filter of the UPDATE so it runs before any row is written): an enqueue of a dependant
 * that holds the row waits for nothing, and this write waits for it (parent-guard.sql.ts). A retry
 * takes no such lock. A cancel request that commits between this statement's snapshot and its
 * write turns a retry into a cancel without that lock; a dependant enqueued at that very moment
 * is then released by the maintenance sweep.
 *
 * Under the `lean` finish the statement first marks its transaction lean (`lean`, a transaction-local
 * setting naming this installation's jobs table), and the effects trigger (postgres-effects.ts)
 * deletes, in this same statement, each success that nothing needs, instead of logging it. The
 * trigger decides, not this statement: it runs after this statement's row locks are held, with a
 * snapshot of its own, so it sees a dependant whose enqueue committed while this write waited for
 * a parent's lock (parent-guard.sql.ts). An attempt transaction sends this same statement.
 */
export function completeJobsQuery(t: PostgresNaming, finish: FinishMode = 'keep') {
  const retry = `(r.kind = 'failed' AND NOT j.cancel_requested AND j.attempt < j.max_attempts)`;
  const fence = `CASE WHEN j.state = 'running' THEN j.worker_id = $1 AND j.leased_until > statement_timestamp() ELSE false END`;
  const text = `
    WITH ending AS MATERIALIZED (
      SELECT j.id FROM ${t.jobs} j, unnest($2::uuid[], $3::integer[], $4::text[]) AS r(id, attempt, kind)
      WHERE j.id = r.id AND j.attempt = r.attempt AND ${fence} AND NOT ${retry}
      ORDER BY j.id
      FOR UPDATE OF j
    ),${finish === 'lean' ? ` lean AS MATERIALIZED (SELECT ${leanFinishSetting(t)} IS NOT NULL AS marked),` : ''} applied AS (
    UPDATE ${t.jobs} j SET
      state = CASE
        WHEN r.kind = 'succeeded' THEN 'succeeded'
        WHEN j.cancel_requested THEN 'cancelled'
        WHEN r.kind = 'quarantined' THEN 'quarantined'
        WHEN ${retry} THEN 'scheduled'
        ELSE 'dead_lettered' END,
      run_at = CASE WHEN ${retry} THEN statement_timestamp() + r.delay_ms * interval '1 millisecond' ELSE j.run_at END,
      worker_id = CASE WHEN ${retry} THEN NULL ELSE j.worker_id END,
      leased_until = NULL,
      last_error = CASE WHEN r.kind = 'succeeded' THEN j.last_error ELSE r.error END,
      output = CASE WHEN r.kind = 'succeeded' THEN r.output::jsonb ELSE j.output END,
      finished_at = CASE WHEN ${retry} THEN j.finished_at ELSE statement_timestamp() END,
      updated_at = statement_timestamp()
    FROM unnest($2::uuid[], $3::integer[], $4::text[], $5::text[], $6::text[], $7::bigint[])
      AS r(id, attempt, kind, output, error, delay_ms)
    WHERE (SELECT count(*) FROM ending) >= 0${finish === 'lean' ? ' AND (SELECT marked FROM lean)' : ''} AND j.id = r.id AND j.attempt = r.attempt AND ${fence}
    RETURNING j.id, j.state, j.schedule_id
    ), ${haltSchedulesCte(t, 'applied')}
    SELECT id, state FROM applied`;

  return async (db: PgExecutor, workerId: string, outcomes: readonly NormalizedOutcome[]): Promise<OutcomeResult[]> => {
    if (outcomes.length === 0) return [];
    const rows = await db.query<{ id: string; state: OutcomeResult['status'] }>(text, [
      workerId,
      outcomes.map((o) => o.jobId),
      outcomes.map((o) => o.attempt),
      outcomes.map((o) => o.kind),
      outcomes.map((o) => o.output),
      outcomes.map((o) => o.error),
      outcomes.map((o) => o.retryDelayMs),
    ]);
    return outcomeResults(outcomes, rows);
  };
}
