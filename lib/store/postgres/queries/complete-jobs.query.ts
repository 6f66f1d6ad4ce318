import type { FinishMode } from '../../../core/index.js';
import type { OutcomeResult } from '../../job-store.js';
import type { NormalizedOutcome } from '../../checked/store-params.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { leanFinishSetting } from '../postgres-effects.js';
import { haltSchedulesCte } from './halt-schedules.cte.js';
import { outcomeResults, type AppliedOutcomes } from './outcome-results.js';

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
 * rescheduled after its retry delay, otherwise dead-lettered; a snooze is rescheduled after its
 * delay (in the retry delays' array) with one more attempt allowed and no error. A dead-lettered or quarantined
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
 *
 * {@link completeCtes} gives its steps as CTEs for a statement's WITH list: `ending`, `applied` (it
 * returns `id`, `state`, `schedule_id`) and the schedules it halts. `$1` is the worker id; the
 * reports' arrays (ids, attempts, kinds, outputs, errors, retry delays) are the six parameters from
 * `$first` on. complete-and-claim.query.ts puts them before a claim in one statement.
 */
export function completeCtes(t: PostgresNaming, first: number, finish: FinishMode = 'keep'): string {
  const [ids, attempts, kinds, outputs, errors, delays] = [0, 1, 2, 3, 4, 5].map((i) => `$${first + i}`);
  const snooze = `(r.kind = 'snoozed' AND NOT j.cancel_requested)`;
  const retry = `(NOT j.cancel_requested AND (r.kind = 'snoozed' OR (r.kind = 'failed' AND j.attempt < j.max_attempts)))`;
  const fence = `CASE WHEN j.state = 'running' THEN j.worker_id = $1 AND j.leased_until > statement_timestamp() ELSE false END`;
  return `ending AS MATERIALIZED (
      SELECT j.id FROM ${t.jobs} j, unnest(${ids}::uuid[], ${attempts}::integer[], ${kinds}::text[]) AS r(id, attempt, kind)
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
      max_attempts = CASE WHEN ${snooze} THEN j.max_attempts + 1 ELSE j.max_attempts END,
      snoozes = CASE WHEN ${snooze} THEN j.snoozes + 1 ELSE j.snoozes END,
      leased_until = NULL,
      last_error = CASE WHEN r.kind = 'succeeded' THEN j.last_error ELSE r.error END,
      output = CASE WHEN r.kind = 'succeeded' THEN r.output::jsonb ELSE j.output END,
      finished_at = CASE WHEN ${retry} THEN j.finished_at ELSE statement_timestamp() END,
      updated_at = statement_timestamp()
    FROM unnest(${ids}::uuid[], ${attempts}::integer[], ${kinds}::text[], ${outputs}::text[], ${errors}::text[], ${delays}::bigint[])
      AS r(id, attempt, kind, output, error, delay_ms)
    WHERE (SELECT count(*) FROM ending) >= 0${finish === 'lean' ? ' AND (SELECT marked FROM lean)' : ''} AND j.id = r.id AND j.attempt = r.attempt AND ${fence}
    RETURNING j.id, j.state, j.schedule_id
    ), ${haltSchedulesCte(t, 'applied')}`;
}

/** The outcome write's parameters after the worker id, in the order {@link completeCtes} reads them. */
export function completeValues(outcomes: readonly NormalizedOutcome[]): unknown[] {
  return [
    outcomes.map((o) => o.jobId),
    outcomes.map((o) => o.attempt),
    outcomes.map((o) => o.kind),
    outcomes.map((o) => o.output),
    outcomes.map((o) => o.error),
    outcomes.map((o) => o.retryDelayMs),
  ];
}

/**
 * Whether the outcomes {@link completeCtes} applied end a job with an open edge to a dependant.
 * The statement's snapshot still shows the edges its own trigger settles after it, as SQLite's
 * `ifReleasing` reads them before its write. A job that ends on a failure counts too: the hint it
 * may send for nothing costs one claim. A dependant whose enqueue commits while this write waits
 * for its parent's row lock is not in that snapshot: the trigger still releases it, and this
 * process's workers find it at their next poll.
 */
export function releasingSql(t: PostgresNaming): string {
  return `EXISTS (SELECT 1 FROM applied a JOIN ${t.dependencies} d ON d.parent_id = a.id WHERE NOT d.settled AND a.state <> 'scheduled')`;
}

/**
 * The outcome write alone: {@link completeCtes}, and the rows it changed; with `releasing`, also
 * whether it ended a job that dependants wait on (outcome-results.ts).
 */
export function completeJobsQuery(t: PostgresNaming, finish: FinishMode = 'keep', releasing = false) {
  const text = `
    WITH ${completeCtes(t, 2, finish)}
    SELECT id, state${releasing ? `, ${releasingSql(t)} AS releasing` : ''} FROM applied`;

  return async (db: PgExecutor, workerId: string, outcomes: readonly NormalizedOutcome[]): Promise<AppliedOutcomes> => {
    if (outcomes.length === 0) return { results: [], releasing: false };
    type Row = { id: string; state: OutcomeResult['status']; releasing?: boolean };
    const rows = await db.query<Row>(text, [workerId, ...completeValues(outcomes)]);
    return { results: outcomeResults(outcomes, rows), releasing: rows[0]?.releasing === true };
  };
}
