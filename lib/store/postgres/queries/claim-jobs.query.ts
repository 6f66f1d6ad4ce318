import type { ClaimParams } from '../../job-store.js';
import type { JobRow } from '../../job-row.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgRow, jobColumns, type PgJobRow } from '../postgres-row.js';

/**
 * Leases up to $3 jobs in one statement. Two candidate sets are read with SKIP LOCKED (so
 * concurrent claimers never wait on, or take, each other's rows): due scheduled jobs, and running
 * jobs whose lease lapsed with attempts left and no cancel request. The earliest of both win.
 */
export function claimJobsQuery(t: PostgresNaming) {
  const text = `
    WITH active AS (
      SELECT q FROM unnest($2::text[]) AS q
      WHERE NOT EXISTS (SELECT 1 FROM ${t.queues} p WHERE p.name = q AND p.paused)
    ), due AS (
      SELECT id, run_at, seq FROM ${t.jobs}
      WHERE state = 'scheduled' AND run_at <= now() AND attempt < max_attempts AND queue IN (SELECT q FROM active)
      ORDER BY run_at, seq LIMIT $3
      FOR UPDATE SKIP LOCKED
    ), lapsed AS (
      SELECT id, run_at, seq FROM ${t.jobs}
      WHERE state = 'running' AND leased_until <= now() AND attempt < max_attempts AND NOT cancel_requested
        AND queue IN (SELECT q FROM active)
      ORDER BY run_at, seq LIMIT $3
      FOR UPDATE SKIP LOCKED
    ), picked AS (
      SELECT id FROM (SELECT * FROM due UNION ALL SELECT * FROM lapsed) c ORDER BY run_at, seq LIMIT $3
    )
    UPDATE ${t.jobs} j SET
      state = 'running',
      attempt = j.attempt + 1,
      worker_id = $1,
      leased_until = now() + $4 * interval '1 millisecond',
      last_error = CASE WHEN j.state = 'running' THEN 'lease expired' ELSE j.last_error END,
      updated_at = now()
    FROM picked WHERE j.id = picked.id
    RETURNING ${jobColumns('j')}`;

  return async (db: PgExecutor, params: ClaimParams): Promise<JobRow[]> => {
    const rows = await db.query<PgJobRow>(text, [params.workerId, params.queues, params.limit, params.leaseMs]);
    return rows.map(fromPgRow).sort((a, b) => a.runAt - b.runAt || a.seq - b.seq);
  };
}
