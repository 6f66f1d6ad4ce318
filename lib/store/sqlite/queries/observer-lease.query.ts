import type { Database } from 'better-sqlite3';
import type { DriverObserverLeaseParams } from '../../checked/store-driver.js';
import type { ObserverLease } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Leases an observer's cursor to a worker, unless another worker holds a live lease or the cursor
 * waits out a retry delay. A new cursor starts at the end of the log. Each lease taken records the
 * observer's filter (`states`, `jobs`: JSON arrays, null for everything), which a lean outcome
 * write reads (complete-jobs.query.ts).
 */
export function observerLeaseQuery(db: Database, t: SqliteNaming) {
  const lease = db.prepare(`
    INSERT INTO ${t.cursors} (observer, last_id, leased_by, leased_until, updated_at, states, jobs)
    VALUES (@observer, coalesce((SELECT max(id) FROM ${t.history}), 0), @worker, @now + @lease, @now, @states, @jobs)
    ON CONFLICT (observer) DO UPDATE SET leased_by = @worker, leased_until = @now + @lease, updated_at = @now,
      states = excluded.states, jobs = excluded.jobs
    WHERE (leased_by IS NULL OR leased_by = @worker OR leased_until <= @now) AND (retry_at IS NULL OR retry_at <= @now)
    RETURNING last_id, failures`);
  return ({ observer, workerId, leaseMs, to, jobs }: DriverObserverLeaseParams, now: number): ObserverLease | null => {
    const list = (names: readonly string[] | null) => (names === null ? null : JSON.stringify(names));
    const row = lease.get({ observer, worker: workerId, lease: leaseMs, now, states: list(to), jobs: list(jobs) }) as { last_id: number; failures: number } | undefined;
    return row ? { observer, position: String(row.last_id), failures: row.failures } : null;
  };
}
