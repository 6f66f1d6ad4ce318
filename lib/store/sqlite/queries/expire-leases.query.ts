import type { Database } from 'better-sqlite3';
import { LEASE_EXPIRED, type JobState } from '../../../core/index.js';
import type { ExpiredLease } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { haltScheduleQuery } from './halt-schedule.query.js';

/** The sweep: settles lapsed leases no claim will take (exhausted, or cancel-requested), paused queues included. */
export function expireLeasesQuery(db: Database, t: SqliteNaming) {
  const expire = db.prepare(`
    UPDATE ${t.jobs} SET
      state = CASE WHEN cancel_requested = 1 THEN 'cancelled' ELSE 'dead_lettered' END,
      leased_until = NULL,
      last_error = @error,
      finished_at = @now,
      updated_at = @now
    WHERE seq IN (
      SELECT seq FROM ${t.jobs}
      WHERE state = 'running' AND leased_until <= @now AND (attempt >= max_attempts OR cancel_requested = 1)
      ORDER BY run_at, seq LIMIT @limit)
    RETURNING id, attempt, state, schedule_id`);
  const halt = haltScheduleQuery(db, t);
  return (limit: number, now: number): ExpiredLease[] =>
    (expire.all({ limit, now, error: LEASE_EXPIRED }) as { id: string; attempt: number; state: JobState; schedule_id: string | null }[]).map((row) => {
      halt(row, now);
      return { jobId: row.id, attempt: row.attempt, state: row.state };
    });
}
