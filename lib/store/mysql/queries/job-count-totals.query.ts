import type { JobState } from '../../../core/index.js';
import type { JobCountTotals } from '../../job-store.types.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { jobCountsSql } from './job-counts.sql.js';

/**
 * Stored jobs per state over every queue, and the number of queues the listing shows, summed in the
 * database from the kept counts (job-counts.sql.ts) and the queues' pause rows: it reads a row per
 * queue and state, never the jobs table, and returns a row per state and one for the queues.
 */
export async function jobCountTotals(db: MysqlExecutor, t: MysqlNaming): Promise<JobCountTotals> {
  const rows = await db.query<{ state: JobState | null; count: string | number }>(
    `SELECT c.state, SUM(c.count) AS count FROM ${jobCountsSql(t)} c GROUP BY c.state
     UNION ALL
     SELECT NULL, COUNT(*) FROM (SELECT k.queue FROM ${jobCountsSql(t)} k UNION SELECT q.name FROM ${t.queues} q) listed`,
  );
  const counts: Partial<Record<JobState, number>> = {};
  let queues = 0;
  for (const row of rows) {
    if (row.state === null) queues = Number(row.count);
    else counts[row.state] = Number(row.count);
  }
  return { counts, queues };
}
