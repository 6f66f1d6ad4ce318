import type { CheckedHeartbeatLease } from '../../checked/store-params.js';
import type { HeartbeatResult } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import { limitFunction } from '../postgres-limits.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Renews, in one statement, every lease the worker still holds: same worker, same attempt, not yet
 * lapsed. The concurrency slots the job holds carry its lease and are renewed first, by renew_held
 * (postgres-limits.ts), which reads them after taking the limits lock, so a slot that a limit
 * change gave the job while this statement ran is renewed too, where this statement's own
 * snapshot, taken before the change committed, would miss it. A job under a cap that no longer
 * has a live slot of it (a claim found it lapsed and gave it away) is reported lost, not renewed:
 * the slot row decides, since a claim and a heartbeat may read the clock a little apart.
 *
 * It never waits for a job's row: one renewal stuck behind another transaction would hold up every
 * lease of the batch until they lapsed. It waits only for a slot a claim holds, for the few
 * milliseconds of that claim's transaction. A job row another transaction is writing (its outcome,
 * finishing after an enqueue that depends on it; an operator's cancel) is passed by with SKIP
 * LOCKED and reported neither renewed nor lost: its lease stands as it was, and the next heartbeat
 * tries again. Anything else not renewed is reported lost, so the worker aborts that attempt.
 *
 * A batch where some lease carries progress runs a second form of the statement that also writes
 * each reported value in the renewal's UPDATE, behind the same fence: progress lands exactly where
 * the lease is renewed, and a stale worker's lands nowhere. A batch without progress runs the plain
 * form, unchanged, so a worker whose handlers never report pays nothing for the feature.
 */
export function heartbeatJobsQuery(t: PostgresNaming) {
  const held = `j.id = r.id AND j.attempt = r.attempt AND j.state = 'running' AND j.worker_id = $1 AND j.leased_until > now()`;
  const statement = (withProgress: boolean) => `
    WITH asked AS (
      SELECT * FROM ${withProgress ? 'unnest($2::uuid[], $3::integer[], $5::text[]) AS r(id, attempt, progress)' : 'unnest($2::uuid[], $3::integer[]) AS r(id, attempt)'}
    ), free AS MATERIALIZED (
      SELECT j.id FROM ${t.jobs} j, asked r WHERE ${held}
      FOR NO KEY UPDATE OF j SKIP LOCKED
    ), slotted AS MATERIALIZED (
      SELECT ${limitFunction(t, 'renew_held')}(coalesce(array_agg(id), '{}'), now() + $4 * interval '1 millisecond') AS lost FROM free
    ), renewed AS (
      UPDATE ${t.jobs} j SET leased_until = now() + $4 * interval '1 millisecond', updated_at = now()${withProgress ? ', progress = COALESCE(r.progress::jsonb, j.progress)' : ''}
      FROM asked r
      WHERE ${held} AND j.id IN (SELECT id FROM free) AND NOT (j.id = ANY ((SELECT lost FROM slotted)::uuid[]))
      RETURNING j.id, j.attempt, j.leased_until, j.cancel_requested
    )
    SELECT r.*, false AS busy FROM renewed r
    UNION ALL
    SELECT j.id, j.attempt, NULL, NULL, true FROM ${t.jobs} j, asked r
    WHERE ${held} AND j.id NOT IN (SELECT id FROM free)`;
  const plain = statement(false);
  const withProgress = statement(true);

  return async (db: PgExecutor, workerId: string, leases: readonly CheckedHeartbeatLease[], leaseMs: number, progress: boolean): Promise<HeartbeatResult> => {
    if (leases.length === 0) return { renewed: [], lost: [] };
    const values: unknown[] = [workerId, leases.map((l) => l.jobId), leases.map((l) => l.attempt), leaseMs];
    if (progress) values.push(leases.map((l) => l.progress ?? null));
    const rows = await db.query<{ id: string; attempt: number; leased_until: Date; cancel_requested: boolean; busy: boolean }>(progress ? withProgress : plain, values);
    const seen = new Set(rows.map((row) => row.id));
    return {
      renewed: rows
        .filter((row) => !row.busy)
        .map((row) => ({ jobId: row.id, attempt: row.attempt, leasedUntil: row.leased_until, cancelRequested: row.cancel_requested })),
      lost: leases.filter((lease) => !seen.has(lease.jobId)).map(({ jobId, attempt }) => ({ jobId, attempt })),
    };
  };
}
