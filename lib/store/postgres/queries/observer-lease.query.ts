import type { DriverObserverLeaseParams } from '../../checked/store-driver.js';
import type { ObserverLease } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { DELIVERY_HORIZON } from './delivery-order.sql.js';

/**
 * Leases an observer's cursor to a worker, unless another worker holds a live lease or the cursor
 * waits out a retry delay. A new cursor starts at the end of the log: after every entry whose
 * transaction has finished. Each lease taken records the observer's filter (`states`, `jobs`;
 * null for everything), which a lean outcome write reads (postgres-effects.ts).
 */
export function observerLeaseQuery(t: PostgresNaming) {
  const text = `INSERT INTO ${t.cursors} AS c (observer, last_tx, last_id, leased_by, leased_until, states, jobs)
         VALUES ($1, ${DELIVERY_HORIZON}, 0, $2, now() + $3 * interval '1 millisecond', $4::text[], $5::text[])
         ON CONFLICT (observer) DO UPDATE SET leased_by = $2, leased_until = now() + $3 * interval '1 millisecond', updated_at = now(),
           states = excluded.states, jobs = excluded.jobs
         WHERE (c.leased_by IS NULL OR c.leased_by = $2 OR c.leased_until <= now()) AND (c.retry_at IS NULL OR c.retry_at <= now())
         RETURNING c.last_tx::text AS last_tx, c.last_id, c.failures`;
  return async (db: PgExecutor, { observer, workerId, leaseMs, to, jobs }: DriverObserverLeaseParams): Promise<ObserverLease | null> => {
    const [row] = await db.query<{ last_tx: string; last_id: string; failures: number }>(text, [observer, workerId, leaseMs, to, jobs]);
    return row ? { observer, position: `${row.last_tx}:${row.last_id}`, failures: row.failures } : null;
  };
}
