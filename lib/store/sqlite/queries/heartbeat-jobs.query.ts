import type { Database } from 'better-sqlite3';
import type { HeartbeatResult, LeaseRef, RenewedLease } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Renews each lease the worker still holds (same worker and attempt, not lapsed); the rest are lost. */
export function heartbeatJobsQuery(db: Database, t: SqliteNaming) {
  const renew = db.prepare(`
    UPDATE ${t.jobs} SET leased_until = @now + @lease_ms, updated_at = @now
    WHERE id = @id AND attempt = @attempt AND state = 'running' AND worker_id = @worker_id AND leased_until > @now
    RETURNING leased_until, cancel_requested`);
  return (workerId: string, leases: readonly LeaseRef[], leaseMs: number, now: number): HeartbeatResult => {
    const renewed: RenewedLease[] = [];
    const lost: LeaseRef[] = [];
    for (const lease of leases) {
      const row = renew.get({ id: lease.jobId, attempt: lease.attempt, worker_id: workerId, lease_ms: leaseMs, now }) as
        | { leased_until: number; cancel_requested: number }
        | undefined;
      if (row) renewed.push({ ...lease, leasedUntil: new Date(row.leased_until), cancelRequested: row.cancel_requested === 1 });
      else lost.push(lease);
    }
    return { renewed, lost };
  };
}
