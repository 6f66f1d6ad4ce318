import type { DataSource } from 'typeorm';
import type { PostgresJobStore } from '../../lib/store/index.js';
import { limitsLockId } from '../../lib/store/postgres/postgres-limits.js';

/** How many backends wait for the limits lock of `store`, as `admin` sees pg_locks. */
export async function limitsLockWaiters(admin: DataSource, store: PostgresJobStore): Promise<number> {
  const key = limitsLockId(store.naming);
  const [row] = await admin.query(
    `SELECT count(*)::int AS n FROM pg_locks
     WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND classid::bigint = ((${key})::bigint >> 32) & 4294967295 AND objid::bigint = (${key})::bigint & 4294967295`,
  );
  return row.n as number;
}

/**
 * Resolves once `ready()` holds, or once the call just started has settled: a store that takes no
 * such lock never waits, and the test's assertions then judge what it did.
 */
export async function until(ready: () => Promise<boolean>, started: readonly Promise<unknown>[]): Promise<void> {
  let settled = false;
  void Promise.allSettled(started).then(() => (settled = true));
  const deadline = Date.now() + 20_000;
  while (!settled && !(await ready())) {
    if (Date.now() > deadline) throw new Error('The racing calls never reached the lock the test holds.');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
