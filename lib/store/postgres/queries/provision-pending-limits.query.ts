import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { exclusiveLimitsLock, provisionSlots } from './limit-slots.sql.js';

/** Pending limits one provisioning pass takes at most; the next claim does the rest. */
export const PROVISION_BATCH = 1_000;

/** Provisions up to `batch` limits declared at enqueue, in the caller's transaction; returns how many. */
export function provisionPendingLimitsQuery(t: PostgresNaming) {
  const exclusive = exclusiveLimitsLock(t);
  // SKIP LOCKED: a limit an operator is setting right now is provisioned by that operator's call.
  const provisionPending = provisionSlots(t, `SELECT key, max FROM ${t.limits} WHERE pending ORDER BY key LIMIT $1 FOR UPDATE SKIP LOCKED`);

  return async (db: PgExecutor, batch = PROVISION_BATCH): Promise<number> => {
    await db.query(exclusive);
    return (await db.query(provisionPending, [batch])).length;
  };
}
