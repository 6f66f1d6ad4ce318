import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Takes a maintenance task's lease for `leaseMs`, or renews it for its holder. The upsert locks the
 * task's row, so of two nodes asking at once the second sees the first's fresh lease and gets no
 * row back. A task the migrations did not create gets its row here.
 */
export function maintenanceLeaseQuery(t: PostgresNaming) {
  const text = `INSERT INTO ${t.maintenance} AS m (task, leased_by, leased_until, updated_at)
    VALUES ($1, $2, now() + $3 * interval '1 millisecond', now())
    ON CONFLICT (task) DO UPDATE SET leased_by = excluded.leased_by, leased_until = excluded.leased_until, updated_at = now()
    WHERE m.leased_until IS NULL OR m.leased_until <= now() OR m.leased_by = excluded.leased_by
    RETURNING true AS held`;
  return async (db: PgExecutor, task: string, workerId: string, leaseMs: number): Promise<boolean> =>
    (await db.query(text, [task, workerId, leaseMs])).length === 1;
}
