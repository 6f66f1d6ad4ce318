import { LEASE_EXPIRED, type JobState } from '../../../core/index.js';
import type { ExpiredLease } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { haltSchedulesCte } from './halt-schedules.cte.js';

/**
 * The maintenance sweep: settles lapsed leases that no claim will take (no attempts left, or a
 * cancel request). Paused queues are included: pausing stops claims, and these jobs already ran.
 * A transaction-scoped try-lock lets one node sweep at a time: a node that finds it taken sweeps
 * nothing this round, which is harmless because the next round, anywhere, catches up.
 */
export function expireLeasesQuery(t: PostgresNaming) {
  const text = `
    WITH sweeper AS MATERIALIZED (
      SELECT pg_try_advisory_xact_lock(hashtext($3)) AS elected
    ), lapsed AS (
      SELECT id FROM ${t.jobs}
      WHERE (SELECT elected FROM sweeper)
        AND state = 'running' AND leased_until <= now() AND (attempt >= max_attempts OR cancel_requested)
      ORDER BY run_at, seq LIMIT $1
      FOR UPDATE SKIP LOCKED
    ), swept AS (
      UPDATE ${t.jobs} j SET
        state = CASE WHEN j.cancel_requested THEN 'cancelled' ELSE 'dead_lettered' END,
        leased_until = NULL,
        last_error = $2,
        finished_at = now(),
        updated_at = now()
      FROM lapsed WHERE j.id = lapsed.id
      RETURNING j.id, j.attempt, j.state, j.schedule_id
    ), ${haltSchedulesCte(t, 'swept')}
    SELECT id, attempt, state FROM swept`;

  return async (db: PgExecutor, limit: number): Promise<ExpiredLease[]> => {
    const rows = await db.query<{ id: string; attempt: number; state: JobState }>(text, [limit, LEASE_EXPIRED, `${t.lockKey}:sweep`]);
    return rows.map((row) => ({ jobId: row.id, attempt: row.attempt, state: row.state }));
  };
}
