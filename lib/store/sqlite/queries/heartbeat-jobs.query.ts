import type { Database } from 'better-sqlite3';
import type { CheckedHeartbeatLease } from '../../checked/store-params.js';
import type { HeartbeatResult, LeaseRef, RenewedLease } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Renews each lease the worker still holds (same worker and attempt, not lapsed); the rest are lost.
 * A lease that carries progress writes it in the same UPDATE, under the same fence, so a stale
 * worker's progress lands nowhere; leases without progress keep the plain statement.
 */
export function heartbeatJobsQuery(db: Database, t: SqliteNaming) {
  const fence = `WHERE id = @id AND attempt = @attempt AND state = 'running' AND worker_id = @worker_id AND leased_until > @now
    RETURNING leased_until, cancel_requested`;
  const renew = db.prepare(`UPDATE ${t.jobs} SET leased_until = @now + @lease_ms, updated_at = @now ${fence}`);
  const renewWithProgress = db.prepare(`UPDATE ${t.jobs} SET leased_until = @now + @lease_ms, updated_at = @now, progress = @progress ${fence}`);
  return (workerId: string, leases: readonly CheckedHeartbeatLease[], leaseMs: number, now: number): HeartbeatResult => {
    const renewed: RenewedLease[] = [];
    const lost: LeaseRef[] = [];
    for (const { jobId, attempt, progress } of leases) {
      const params = { id: jobId, attempt, worker_id: workerId, lease_ms: leaseMs, now };
      const row = (progress === undefined ? renew.get(params) : renewWithProgress.get({ ...params, progress })) as
        | { leased_until: number; cancel_requested: number }
        | undefined;
      if (row) renewed.push({ jobId, attempt, leasedUntil: new Date(row.leased_until), cancelRequested: row.cancel_requested === 1 });
      else lost.push({ jobId, attempt });
    }
    return { renewed, lost };
  };
}
