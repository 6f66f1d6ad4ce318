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
 */
export async function lockJobs(db: MysqlExecutor, t: MysqlNaming, ids: readonly string[], options: { readonly guard?: boolean } = {}): Promise<LockedJobs> {
  const [clock, ...rest] = (await db.script([{ sql: 'SELECT UTC_TIMESTAMP(3) AS now' }, ...lockJobsStatements(t, ids, options)])) as [{ now: string }[], ...unknown[]];
  return { now: fromMysqlInstant(clock[0]!.now).getTime(), jobs: lockedJobsOf(rest) };
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
