import type { LockedJob, LockedJobRow } from '../mysql-effects.js';
import { LOCKED_JOB_COLUMNS, toLockedJob } from '../mysql-effects.js';
import type { MysqlExecutor, MysqlStatement } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';

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
 */
export async function lockJobs(db: MysqlExecutor, t: MysqlNaming, ids: readonly string[]): Promise<LockedJobs> {
  const [clock, ...rest] = (await db.script([{ sql: 'SELECT UTC_TIMESTAMP(3) AS now' }, ...lockJobsStatements(t, ids)])) as [{ now: string }[], ...unknown[]];
  return { now: fromMysqlInstant(clock[0]!.now).getTime(), jobs: lockedJobsOf(rest) };
}

/** The locking read of {@link lockJobs}, for a caller that sends it with statements of its own: none when `ids` is empty. */
export function lockJobsStatements(t: MysqlNaming, ids: readonly string[]): MysqlStatement[] {
  return ids.length === 0 ? [] : [{ sql: `SELECT ${LOCKED_JOB_COLUMNS(t)} FROM ${t.jobs} j WHERE j.id IN (?) ORDER BY j.id FOR UPDATE`, values: [ids] }];
}

/** The jobs the statements of {@link lockJobsStatements} locked, from their results. */
export function lockedJobsOf(results: readonly unknown[]): Map<string, LockedJob> {
  const rows = (results[0] ?? []) as LockedJobRow[];
  return new Map(rows.map((r) => [r.id, toLockedJob(r)]));
}
