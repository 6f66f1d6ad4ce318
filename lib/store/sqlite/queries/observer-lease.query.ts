import type { Database } from 'better-sqlite3';
import type { ObserverLease } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Leases an observer's cursor to a worker, unless another worker holds a live lease or the cursor
 * waits out a retry delay. A new cursor starts at the end of the log.
 */
export function observerLeaseQuery(db: Database, t: SqliteNaming) {
  const lease = db.prepare(`
    INSERT INTO ${t.cursors} (observer, last_id, leased_by, leased_until, updated_at)
    VALUES (@observer, coalesce((SELECT max(id) FROM ${t.history}), 0), @worker, @now + @lease, @now)
    ON CONFLICT (observer) DO UPDATE SET leased_by = @worker, leased_until = @now + @lease, updated_at = @now
    WHERE (leased_by IS NULL OR leased_by = @worker OR leased_until <= @now) AND (retry_at IS NULL OR retry_at <= @now)
    RETURNING last_id, failures`);
  return (observer: string, worker: string, leaseMs: number, now: number): ObserverLease | null => {
    const row = lease.get({ observer, worker, lease: leaseMs, now }) as { last_id: number; failures: number } | undefined;
    return row ? { observer, position: String(row.last_id), failures: row.failures } : null;
  };
}
