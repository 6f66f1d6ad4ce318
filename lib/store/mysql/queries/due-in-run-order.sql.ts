import { MAX_PRIORITY, MIN_PRIORITY } from '../../../core/index.js';
import type { MysqlNaming } from '../mysql-naming.js';

/**
 * The first `limit` jobs due at `clock` in run-time order (run_at, seq), whatever their priority,
 * as a derived table of (run_at, seq): the first `limit` of each priority's range of jobs_claim_idx
 * (state, parked_key, priority, run_at, seq), and the parked jobs (held back by a limit), merged by
 * run time. MySQL has no LATERAL to walk only the priorities in use, but a priority is one of 21
 * values (jobs_priority_check), so there is a branch for each, and an empty one costs a single
 * index probe. Each branch reads the index alone and stops at `limit`, and future-dated jobs are
 * never walked. `limit` is written into the text (a whole number the caller chose), since it
 * appears 22 times.
 *
 * The parked jobs come from jobs_parked_due_idx (parked_due_at, seq), whose generated column is a
 * parked job's run time and NULL for every other job: PostgreSQL's partial index of the same name.
 * MariaDB picks that index only when the read names the column.
 */
export function dueInRunOrder(t: MysqlNaming, clock: string, limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`A due-jobs read takes a whole number of jobs, got ${limit}.`);
  const branches: string[] = [];
  for (let priority = MIN_PRIORITY; priority <= MAX_PRIORITY; priority += 1) {
    branches.push(`(SELECT j.run_at, j.seq FROM ${t.jobs} j WHERE j.state = 'scheduled' AND j.parked_key IS NULL AND j.priority = ${priority}
        AND j.run_at <= ${clock} ORDER BY j.run_at, j.seq LIMIT ${limit})`);
  }
  branches.push(`(SELECT j.parked_due_at AS run_at, j.seq FROM ${t.jobs} j WHERE j.parked_due_at <= ${clock} ORDER BY j.parked_due_at, j.seq LIMIT ${limit})`);
  return `(SELECT u.run_at, u.seq FROM (${branches.join('\n      UNION ALL ')}) u ORDER BY u.run_at, u.seq LIMIT ${limit})`;
}
