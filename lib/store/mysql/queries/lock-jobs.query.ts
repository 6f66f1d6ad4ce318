import type { LockedJob, LockedJobRow } from '../mysql-effects.js';
import { LOCKED_JOB_COLUMNS, toLockedJob } from '../mysql-effects.js';
import type { MysqlExecutor, MysqlStatement } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { parentGuard } from '../mysql-locks.js';

/** Jobs a write locked, by id, and the database's clock it judges them by. */
export interface LockedJobs {
  readonly now: number;
  readonly jobs: Map<string, LockedJob>;
}

/**
 * Reads the database's clock and locks the jobs `ids` names (those that exist) for the rest of
 * the transaction, in id order, as every write that locks several jobs does, so two writers that
 * lock overlapping jobs never wait on each other in a cycle. One round trip (the START TRANSACTION
 * of a store-owned transaction goes with it).
 *
 * The clock is read before the locks, so a write is judged by when it was sent, as a PostgreSQL
 * statement is by its start. `clockAfterLocks` reads it once the locks are held instead, for a
 * heartbeat: a claim counting the jobs under a cap locks each job whose lease it finds lapsed
 * (mysql-limits.ts), and a heartbeat that waited on that lock must judge by a clock past the
 * claim's, or it would renew a lease the claim gave away and two jobs would run under a cap of one.
 */
export async function lockJobs(
  db: MysqlExecutor,
  t: MysqlNaming,
  ids: readonly string[],
  options: { readonly guard?: boolean; readonly clockAfterLocks?: boolean } = {},
): Promise<LockedJobs> {
  const clock = { sql: 'SELECT UTC_TIMESTAMP(3) AS now' };
  const locks = lockJobsStatements(t, ids, options);
  const results = (await db.script(options.clockAfterLocks ? [...locks, clock] : [clock, ...locks])) as unknown[];
  const [now] = (options.clockAfterLocks ? results.pop() : results.shift()) as { now: string }[];
  return { now: fromMysqlInstant(now!.now).getTime(), jobs: lockedJobsOf(results) };
}

/**
 * The locking read of {@link lockJobs}, for a caller that sends it with statements of its own:
 * none when `ids` is empty. With `guard`, for a write that may end the jobs, their parent guard is
 * taken exclusive first (mysql-locks.ts), so the open edges it reads include every committed one.
 */
export function lockJobsStatements(t: MysqlNaming, ids: readonly string[], { guard = false }: { readonly guard?: boolean } = {}): MysqlStatement[] {
  if (ids.length === 0) return [];
  return [...(guard ? parentGuard(t, ids, 'exclusive') : []), { sql: `SELECT ${LOCKED_JOB_COLUMNS(t)} FROM ${t.jobs} j WHERE j.id IN (?) ORDER BY j.id FOR UPDATE`, values: [ids] }];
}

/** The jobs the statements of {@link lockJobsStatements} locked, from their results (the last of them). */
export function lockedJobsOf(results: readonly unknown[]): Map<string, LockedJob> {
  const rows = (results.at(-1) ?? []) as LockedJobRow[];
  return new Map(rows.map((r) => [r.id, toLockedJob(r)]));
}
