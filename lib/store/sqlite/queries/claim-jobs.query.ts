import type { Database } from 'better-sqlite3';
import type { ClaimParams } from '../../job-store.js';
import type { JobRow } from '../../job-row.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';

/**
 * Leases up to `limit` jobs: the earliest of the due scheduled jobs and the running jobs whose
 * lease lapsed with attempts left and no cancel request, from unpaused queues. SQLite has one
 * writer at a time, so no row locks are needed: the surrounding IMMEDIATE transaction is the lock.
 */
export function claimJobsQuery(db: Database, t: SqliteNaming) {
  const eligible = `queue IN (SELECT value FROM json_each(@queues)) AND queue NOT IN (SELECT name FROM ${t.queues} WHERE paused = 1)`;
  const claim = db.prepare(`
    UPDATE ${t.jobs} SET
      state = 'running',
      attempt = attempt + 1,
      worker_id = @worker_id,
      leased_until = @now + @lease_ms,
      last_error = CASE WHEN state = 'running' THEN 'lease expired' ELSE last_error END,
      updated_at = @now
    WHERE seq IN (
      SELECT seq FROM (
        SELECT * FROM (
          SELECT seq, run_at FROM ${t.jobs}
          WHERE state = 'scheduled' AND run_at <= @now AND attempt < max_attempts AND ${eligible}
          ORDER BY run_at, seq LIMIT @limit)
        UNION ALL
        SELECT * FROM (
          SELECT seq, run_at FROM ${t.jobs}
          WHERE state = 'running' AND leased_until <= @now AND attempt < max_attempts AND cancel_requested = 0 AND ${eligible}
          ORDER BY run_at, seq LIMIT @limit)
      ) ORDER BY run_at, seq LIMIT @limit)
    RETURNING *`);
  return (params: ClaimParams, now: number): JobRow[] =>
    (claim.all({ worker_id: params.workerId, queues: JSON.stringify(params.queues), limit: params.limit, lease_ms: params.leaseMs, now }) as SqliteJobRow[])
      .map(fromSqliteRow)
      .sort((a, b) => a.runAt - b.runAt || a.seq - b.seq);
}
