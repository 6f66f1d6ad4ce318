import type { JobState } from '../../../core/index.js';
import type { JobStats } from '../../job-store.types.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { dueInRunOrder } from './due-in-run-order.sql.js';
import { jobCountsSql } from './job-counts.sql.js';

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Job counts per queue and state (from the kept counts, job-counts.sql.ts) and the oldest job due
 * now: the first of the due jobs in run-time order (due-in-run-order.sql.ts), one index probe per
 * priority and a read of the parked jobs, however many jobs wait or are retained. One statement.
 * The counts are sorted here: MySQL sorts an ENUM by its position in the type, not by its name.
 */
export async function jobStats(db: MysqlExecutor, t: MysqlNaming): Promise<JobStats> {
  const rows = await db.query<{ oldest: string | null; now: string; queue: string | null; state: JobState | null; count: string | null }>(
    `SELECT d.oldest, d.now, c.queue, c.state, c.count
     FROM (SELECT (SELECT MIN(f.run_at) FROM ${dueInRunOrder(t, 'UTC_TIMESTAMP(3)', 1)} f) AS oldest, UTC_TIMESTAMP(3) AS now) d
     LEFT JOIN ${jobCountsSql(t)} c ON TRUE`,
  );
  const counts = rows
    .filter((row) => row.queue !== null)
    .map((row) => ({ queue: row.queue!, state: row.state!, count: Number(row.count) }))
    .sort((a, b) => byText(a.queue, b.queue) || byText(a.state, b.state));
  const [first] = rows;
  return { counts, oldestDueAt: first!.oldest === null ? null : fromMysqlInstant(first!.oldest), now: fromMysqlInstant(first!.now) };
}
