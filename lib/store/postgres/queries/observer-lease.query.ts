import type { ObserverLease } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { DELIVERY_HORIZON } from './delivery-order.sql.js';

/**
 * Leases an observer's cursor to a worker, unless another worker holds a live lease or the cursor
 * waits out a retry delay. A new cursor starts at the end of the log: after every entry whose
 * transaction has finished.
 */
export function observerLeaseQuery(t: PostgresNaming) {
  const text = `INSERT INTO ${t.cursors} AS c (observer, last_tx, last_id, leased_by, leased_until)
         VALUES ($1, ${DELIVERY_HORIZON}, 0, $2, now() + $3 * interval '1 millisecond')
         ON CONFLICT (observer) DO UPDATE SET leased_by = $2, leased_until = now() + $3 * interval '1 millisecond', updated_at = now()
         WHERE (c.leased_by IS NULL OR c.leased_by = $2 OR c.leased_until <= now()) AND (c.retry_at IS NULL OR c.retry_at <= now())
         RETURNING c.last_tx::text AS last_tx, c.last_id, c.failures`;
  return async (db: PgExecutor, observer: string, workerId: string, leaseMs: number): Promise<ObserverLease | null> => {
    const [row] = await db.query<{ last_tx: string; last_id: string; failures: number }>(text, [observer, workerId, leaseMs]);
    return row ? { observer, position: `${row.last_tx}:${row.last_id}`, failures: row.failures } : null;
  };
}
