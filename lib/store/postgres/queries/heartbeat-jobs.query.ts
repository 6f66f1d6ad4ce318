import type { HeartbeatResult, LeaseRef } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import { limitFunction } from '../postgres-limits.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Renews, in one statement, every lease the worker still holds: same worker, same attempt, not yet
 * lapsed. Anything not renewed is reported lost, so the worker aborts that attempt. The concurrency
 * slots the job holds carry its lease and are renewed with it by renew_slots (postgres-limits.ts),
 * once every renewal is written: the function reads the slots after taking the limits lock, so a
 * slot that a limit change gave the job while this statement ran is renewed too, where this
 * statement's own snapshot, taken before the change committed, would miss it.
 */
export function heartbeatJobsQuery(t: PostgresNaming) {
  const text = `
    WITH renewed AS (
      UPDATE ${t.jobs} j SET leased_until = now() + $4 * interval '1 millisecond', updated_at = now()
      FROM unnest($2::uuid[], $3::integer[]) AS r(id, attempt)
      WHERE j.id = r.id AND j.attempt = r.attempt AND j.state = 'running' AND j.worker_id = $1 AND j.leased_until > now()
      RETURNING j.id, j.attempt, j.leased_until, j.cancel_requested
    )
    SELECT r.*, (SELECT ${limitFunction(t, 'renew_slots')}(array_agg(id), array_agg(leased_until)) FROM renewed) AS renewed_slots
    FROM renewed r`;

  return async (db: PgExecutor, workerId: string, leases: readonly LeaseRef[], leaseMs: number): Promise<HeartbeatResult> => {
    if (leases.length === 0) return { renewed: [], lost: [] };
    const rows = await db.query<{ id: string; attempt: number; leased_until: Date; cancel_requested: boolean }>(text, [
      workerId,
      leases.map((l) => l.jobId),
      leases.map((l) => l.attempt),
      leaseMs,
    ]);
    const held = new Map(rows.map((row) => [row.id, row]));
    return {
      renewed: rows.map((row) => ({ jobId: row.id, attempt: row.attempt, leasedUntil: row.leased_until, cancelRequested: row.cancel_requested })),
      lost: leases.filter((lease) => !held.has(lease.jobId)),
    };
  };
}
