import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Takes a maintenance task's lease for `leaseMs`, or renews it for its holder; false while another worker's lease is live. */
export function maintenanceLeaseQuery(db: Database, t: SqliteNaming) {
  const lease = db.prepare(`
    INSERT INTO ${t.maintenance} (task, leased_by, leased_until, updated_at) VALUES (@task, @worker, @now + @lease, @now)
    ON CONFLICT (task) DO UPDATE SET leased_by = @worker, leased_until = @now + @lease, updated_at = @now
    WHERE leased_until IS NULL OR leased_until <= @now OR leased_by = @worker`);
  return (task: string, worker: string, leaseMs: number, now: number): boolean => lease.run({ task, worker, lease: leaseMs, now }).changes === 1;
}
