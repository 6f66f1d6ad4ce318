import type { HeartbeatResult, LeaseRef } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Renews, in one statement, every lease the worker still holds: same worker, same attempt, not yet
 * lapsed. Anything not renewed is reported lost, so the worker aborts that attempt. The concurrency
 * slots the job holds carry its lease and are renewed with it, except retired ones (above a lowered
 * max), which stay 'infinity' so that they never come free.
 */
export function heartbeatJobsQuery(t: PostgresNaming) {
  const text = `
    WITH renewed AS (
      UPDATE ${t.jobs} j SET leased_until = now() + $4 * interval '1 millisecond', updated_at = now()
      FROM unnest($2::uuid[], $3::integer[]) AS r(id, attempt)
      WHERE j.id = r.id AND j.attempt = r.attempt AND j.state = 'running' AND j.worker_id = $1 AND j.leased_until > now()
      RETURNING j.id, j.attempt, j.leased_until, j.cancel_requested
    ), slots AS (
      UPDATE ${t.slots} s SET held_until = r.leased_until FROM renewed r WHERE s.job_id = r.id AND s.held_until > now() AND s.held_until <> 'infinity'
    )
    SELECT * FROM renewed`;

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
