import type { MysqlExecutor } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { lockedJobsOf, lockJobsStatements, type LockedJobs } from './lock-jobs.query.js';

/**
 * Locks the jobs a heartbeat renews, then reads the database's clock it judges their leases by: a
 * clock read before a lock that waited is older than the wait. A claim that counts the jobs under a
 * cap locks each job whose lease it finds lapsed (mysql-limits.ts), so a heartbeat that waited on
 * that lock reads the clock after the claim committed, finds the lease lapsed too and renews
 * nothing; renewing it would leave two jobs running under a cap of one. One round trip.
 */
export async function lockForHeartbeat(db: MysqlExecutor, t: MysqlNaming, ids: readonly string[]): Promise<LockedJobs> {
  const results = (await db.script([...lockJobsStatements(t, ids), { sql: 'SELECT UTC_TIMESTAMP(3) AS now' }])) as unknown[];
  const clock = results.at(-1) as { now: string }[];
  return { now: fromMysqlInstant(clock[0]!.now).getTime(), jobs: lockedJobsOf(results.slice(0, -1)) };
}
