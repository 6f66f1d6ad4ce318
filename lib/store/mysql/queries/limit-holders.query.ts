import type { DriverHolders } from '../../operator-reads.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';

type Row = { max: number; id: string | null; name: string; queue: string; worker_id: string; attempt: number; leased_until: string };

/**
 * A limit's cap and the jobs holding it now, soonest lease end first (then job id), at most
 * `limit + 1`, in one statement. On this store a limit's holders are the running jobs of its queue
 * or key with a live lease, which is what a claim counts (mysql-limits.ts). They are read through
 * jobs_lane_idx (state, queue, ...) for a queue and jobs_running_key_idx (state, concurrency_key,
 * leased_until) for a key, so the read costs the jobs that run there, never the jobs stored. No
 * row at all when the key has no limit.
 */
export async function limitHolders(db: MysqlExecutor, t: MysqlNaming, key: string, limit: number): Promise<DriverHolders> {
  const [column, index, value] = key.startsWith('queue:')
    ? ['queue', 'jobs_lane_idx', key.slice('queue:'.length)]
    : ['concurrency_key', 'jobs_running_key_idx', key.slice('key:'.length)];
  const rows = await db.query<Row>(
    `SELECT l.max, h.id, h.name, h.queue, h.worker_id, h.attempt, h.leased_until
     FROM ${t.limits} l LEFT JOIN (
       SELECT j.id, j.name, j.queue, j.worker_id, j.attempt, j.leased_until FROM ${t.jobs} j FORCE INDEX (${index})
       WHERE j.state = 'running' AND j.${column} = ? AND j.leased_until > UTC_TIMESTAMP(3)
       ORDER BY j.leased_until, j.id LIMIT ?
     ) h ON TRUE
     WHERE l.\`key\` = ?
     ORDER BY h.leased_until, h.id`,
    [value, limit + 1, key],
  );
  if (rows.length === 0) return { max: null, holders: [] };
  return {
    max: rows[0]!.max,
    holders: rows
      .filter((row) => row.id !== null)
      .map((row) => ({ jobId: row.id!, name: row.name, queue: row.queue, workerId: row.worker_id, attempt: row.attempt, leasedUntil: fromMysqlInstant(row.leased_until) })),
  };
}
